"""Policies shared by several engines: pure, deterministic functions with no I/O."""
