"""The semantic extraction path's pieces (seed 004): the prompt, an OpenAI-compatible provider, and strict parsing
of its reply into candidates for the seed 002 gates."""
