"""Learning stores (seed 001 §2.4): the per-user learning capsule, company vocabulary packs,
global derived signals and signed learning packages."""
