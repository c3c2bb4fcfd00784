"""ThreadStore settings: MEMMESH_THREAD_STORE_* environment variables; defaults follow the seeds."""

from __future__ import annotations

from pydantic import Field, PositiveInt
from pydantic_settings import BaseSettings, SettingsConfigDict

from memmesh.engines.thread_store.domain.resume import DAY_US
from memmesh.engines.thread_store.resuming import DEFAULT_KEPT_USERS


class ThreadStoreSettings(BaseSettings):
    """Session rule, working-memory bounds and the index outbox."""

    model_config = SettingsConfigDict(env_prefix="MEMMESH_THREAD_STORE_", extra="ignore")

    # seed 003: a gap above 30 minutes since the user's last interaction starts a session.
    session_gap_s: int = Field(default=1800, gt=0)
    # seed 003: working memory is the last 1-6 turns of the session.
    working_memory_turns: int = Field(default=6, ge=1, le=6)
    # Seconds a Redis session buffer outlives its last turn (the archive still has the turns).
    buffer_ttl_s: int = Field(default=86_400, gt=0)
    # The index outbox: the first attempt a write makes before it answers, the deadline of
    # each later attempt, the longest wait between attempts, and attempts before a dead letter.
    index_first_attempt_ms: int = Field(default=300, gt=0)
    # An erasure's first attempt waits longer (within the callers' 2 s deadline): its index
    # removal should be in force when it answers, so the next Brief's excerpts obey it.
    index_erasure_attempt_ms: int = Field(default=1200, gt=0)
    # On PostgreSQL an erasure answers once its VACUUM is done or after this long, whichever
    # comes first (the VACUUM goes on); SQLite's WAL truncation is always awaited.
    reclaim_wait_ms: int = Field(default=500, ge=0)
    index_attempt_ms: int = Field(default=2000, gt=0)
    index_retry_max_s: float = Field(default=5.0, gt=0)
    index_max_attempts: int = Field(default=2000, gt=0)
    # seed 001 §2.18 retention: days an unpinned thread is kept after its last use (an
    # unresolved one at least 90), and per-tenant windows as JSON ({"tenant-a": 30}).
    thread_retention_days: int = Field(default=365, gt=0)
    tenant_thread_retention_days: dict[str, PositiveInt] = Field(default_factory=dict)
    # Users whose session-start resume parts the process keeps for their next session start
    # (keyed by the user's data version in the store; 0 keeps nothing).
    resume_kept_users: int = Field(default=DEFAULT_KEPT_USERS, ge=0)

    def thread_retention_us(self, tenant_id: str) -> int:
        """The tenant's thread retention window in microseconds."""
        days = self.tenant_thread_retention_days.get(tenant_id, self.thread_retention_days)
        return days * DAY_US
