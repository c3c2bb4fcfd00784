"""AtomExtractor engine: turns user turns into typed, gated memory-atom candidates."""
