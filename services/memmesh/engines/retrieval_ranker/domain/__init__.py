"""Pure logic of the RetrievalRanker: documents, text analysis, BM25, ranking, a user's index."""
