"""Settings of the RetrievalRanker engine (environment prefix MEMMESH_RETRIEVAL_RANKER_)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from memmesh.engines.retrieval_ranker.domain.dense import RetrievalMode


class RankerSettings(BaseSettings):
    """Defaults suit one process on a small machine."""

    model_config = SettingsConfigDict(env_prefix="MEMMESH_RETRIEVAL_RANKER_", extra="ignore")

    # The memory the cached user indexes may take together (estimated per document,
    # RANKING.md): a 10,000-atom + 10,000-turn user takes about 60 MB with dense vectors, a
    # user of a few hundred turns well under 1 MB. The least recently used user goes first;
    # a user pushed out is read whole again on their next Brief.
    max_cache_mb: int = Field(default=1024, ge=1)
    # On PostgreSQL an erasing Remove or ForgetUser answers once its VACUUM is done or after
    # this long, whichever comes first (the VACUUM goes on); SQLite's WAL truncation is
    # always awaited.
    reclaim_wait_ms: int = Field(default=500, ge=0)
    # Decide by meaning (memmesh.embedding) whether a request could touch the user's
    # standing constraints; off, or without the model installed, every request does.
    sentence_encoder: bool = True
    # Dense vectors from memmesh.embedding's static table, fused with BM25 (RANKING.md);
    # bm25 or dense alone serve to measure each (make eval-retrieval).
    retrieval_mode: RetrievalMode = RetrievalMode.FUSED
    # Turns and requests embedded by the sentence encoder as well (atoms and digests stay on
    # the static table, documents.SENTENCE_KINDS): a request's vector costs about a
    # millisecond and a half more, a turn's at Upsert about as much.
    # Needs sentence_encoder; changing it rederives every stored vector on its next read
    # (a Reindex stores them again).
    sentence_vectors: bool = True
