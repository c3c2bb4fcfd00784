"""Resume candidates and tiers (seed 001 §2.21, §2.21A)."""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.engines.thread_store.model import Digest, Tier

HOUR_US = 3_600 * 1_000_000
HOT_WINDOW_US = 72 * HOUR_US
WARM_WINDOW_US = 30 * 24 * HOUR_US
# Unresolved threads keep their priority for 90 days, then decay to ordinary recency.
UNRESOLVED_WINDOW_US = 90 * 24 * HOUR_US
MAX_CANDIDATES = 5


def counts_as_unresolved(digest: Digest, now_us: int) -> bool:
    """Unresolved and within its 90-day eligibility window."""
    return digest.unresolved and now_us - digest.last_used_us <= UNRESOLVED_WINDOW_US


def resume_order(digests: Sequence[Digest], now_us: int) -> list[Digest]:
    """Pinned > unresolved > most recent last use > highest use count > lexicographic id."""
    return sorted(
        digests,
        key=lambda d: (
            not d.pinned,
            not counts_as_unresolved(d, now_us),
            -d.last_used_us,
            -d.use_count,
            d.thread_id,
        ),
    )


def tier_of(digest: Digest, now_us: int) -> Tier:
    """HOT within 72 h of its last use, WARM within 30 days, else COLD."""
    age = now_us - digest.last_used_us
    if age <= HOT_WINDOW_US:
        return Tier.HOT
    if age <= WARM_WINDOW_US:
        return Tier.WARM
    return Tier.COLD


def resume_candidates(
    digests: Sequence[Digest], opening_session_id: str, now_us: int, limit: int = MAX_CANDIDATES
) -> tuple[list[Digest], str]:
    """Candidate threads in resume order (the opening session excluded) and the top one's tier."""
    ranked = resume_order([d for d in digests if d.thread_id != opening_session_id], now_us)[:limit]
    return ranked, (tier_of(ranked[0], now_us).value if ranked else "")
