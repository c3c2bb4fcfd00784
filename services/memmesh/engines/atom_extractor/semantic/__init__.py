"""The optional semantic path (seed 004): a model proposes facts, the seed 002 gates decide."""
