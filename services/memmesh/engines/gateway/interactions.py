"""When an Ingest records the user's interaction in Current State.

The ThreadStore keeps the time of every turn (the Brief's temporal authority takes the latest
of its time and Current State's), so Current State's last interaction needs no record per
turn: each record is an outbox row here, a Current State write and a Ledger event, for a
voice session that speaks a turn every few seconds. A user turn is recorded when it opens a
session this gateway has not recorded for the user, and after that once `refresh_s` of turn
time has passed since the last record; Current State's value stays within that of the truth.
"""

from __future__ import annotations

from collections import OrderedDict

# A minute: the last interaction that Current State and the operator view show is that close.
INTERACTION_REFRESH_S = 60.0
# Users whose last record this gateway remembers (about 200 bytes each); the least recently
# seen go first, and a user forgotten here is only recorded once more.
MAX_PACED_USERS = 100_000


class InteractionPacer:
    """Decides, per user turn, whether its interaction record is due."""

    def __init__(
        self, refresh_s: float = INTERACTION_REFRESH_S, max_users: int = MAX_PACED_USERS
    ) -> None:
        self._refresh_us = int(refresh_s * 1_000_000)
        self._max_users = max_users
        # (tenant, user) -> (session id, turn time in µs) of the last record made.
        self._recorded: OrderedDict[tuple[str, str], tuple[str, int]] = OrderedDict()

    def due(self, tenant_id: str, user_id: str, session_id: str, time_us: int) -> bool:
        """Whether this turn's interaction is to be recorded (and, if so, it counts as made).
        A turn of the session last recorded that is less than `refresh_s` after that record,
        or older than it, is not."""
        key = (tenant_id, user_id)
        last = self._recorded.get(key)
        if last is not None and last[0] == session_id and time_us - last[1] < self._refresh_us:
            self._recorded.move_to_end(key)
            return False
        self._recorded[key] = (session_id, time_us)
        self._recorded.move_to_end(key)
        while len(self._recorded) > self._max_users:
            self._recorded.popitem(last=False)
        return True

    def forget(self, tenant_id: str, user_id: str) -> None:
        """Record the user's next turn whatever its time (the record this pacer counted as
        made was never queued)."""
        self._recorded.pop((tenant_id, user_id), None)
