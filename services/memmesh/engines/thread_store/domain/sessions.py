"""Session rules (seed 003): when a turn starts a session."""

from __future__ import annotations

from memmesh.engines.thread_store.domain.model import Mode, UserActivity

DEFAULT_SESSION_GAP_US = 30 * 60 * 1_000_000


def session_mode(
    session_known: bool, activity: UserActivity | None, now_us: int, gap_us: int
) -> Mode:
    """SESSION_START for a session id new to the user or a gap above the threshold, else IN_SESSION.

    A gap of exactly the threshold is still in session: the seed says "gap > 30 minutes".
    """
    if not session_known or activity is None:
        return Mode.SESSION_START
    if now_us - activity.last_interaction_us > gap_us:
        return Mode.SESSION_START
    return Mode.IN_SESSION
