"""Adapters of the RetrievalRanker: its SQL store and its peer engines."""
