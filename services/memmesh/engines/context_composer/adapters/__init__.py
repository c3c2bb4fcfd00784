"""The composer's peer clients: one module per engine it reads, each call through call_engine."""
