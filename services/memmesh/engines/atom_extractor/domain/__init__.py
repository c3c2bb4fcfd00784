"""The AtomExtractor's pure domain: the capsule's records and the rules that change them (no I/O)."""
