"""Memory for voice pipelines: the bundle → prompt renderer, the per-turn logic every
integration shares (VoiceMemory), and the Pipecat and LiveKit Agents integrations
(`memmesh.voice.pipecat_memory`, `memmesh.voice.livekit_memory`; optional extras)."""
