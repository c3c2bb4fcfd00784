"""Adapters of the AtomExtractor: its SQL store and its peer engines."""
