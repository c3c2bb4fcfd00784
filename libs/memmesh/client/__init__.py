"""Clients of the mesh for tools, benchmarks and tests (never used by an engine)."""
