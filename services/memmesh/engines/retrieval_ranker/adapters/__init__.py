"""Adapters of the RetrievalRanker: its SQL store."""
