"""The privacy audit: a seeded conversation script with every privacy command, played
through the gateway of a real mesh, then a scan of every byte the mesh wrote and every
Brief it answered for what the user asked to forget or never to hear again."""
