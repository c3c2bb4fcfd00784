"""The outbox's tables and SQL: one text for SQLite and PostgreSQL ("?" placeholders).

The tables live in the owning engine's database: the engine adds `outbox_migration`
to its own migrations under a version number of its choosing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memmesh.outbox.effects import DeadEffect, Effect, QueuedEffect
from memmesh.runtime.telemetry import current_traceparent
from memmesh.storage.migrations import Migration
from memmesh.storage.sql import Database, Dialect, Row, SqlTx, marks


def outbox_migration(dialect: Dialect, version: int) -> Migration:
    """The outbox's tables, as one migration step numbered by the engine."""
    big, blob = dialect.big_int, dialect.blob
    return Migration(
        version,
        (
            f"""CREATE TABLE outbox_effects (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, seq {big} NOT NULL,
                lane TEXT NOT NULL, kind TEXT NOT NULL, idempotency_key TEXT NOT NULL, payload {blob} NOT NULL,
                attempts INTEGER NOT NULL, enqueued_us {big} NOT NULL, next_attempt_us {big} NOT NULL,
                leased_until_us {big} NOT NULL, last_error TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, seq))""",
            "CREATE UNIQUE INDEX outbox_effects_by_key ON outbox_effects (tenant_id, user_id, idempotency_key)",
            "CREATE INDEX outbox_effects_by_lane ON outbox_effects (tenant_id, user_id, lane, seq)",
            "CREATE INDEX outbox_effects_due ON outbox_effects (next_attempt_us)",
            f"""CREATE TABLE outbox_dead (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, seq {big} NOT NULL,
                lane TEXT NOT NULL, kind TEXT NOT NULL, idempotency_key TEXT NOT NULL, payload {blob} NOT NULL,
                attempts INTEGER NOT NULL, enqueued_us {big} NOT NULL, dead_us {big} NOT NULL, reason TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, seq))""",
        ),
    )


# The outbox's own later steps, numbered apart from any engine's so none takes another's number.
OUTBOX_TRACE_VERSION = 1001


def outbox_trace_migration() -> Migration:
    """The W3C traceparent of the call that queued each effect ('' when it was not traced),
    so its delivery, however late, links back to the turn that caused it."""
    return Migration(
        OUTBOX_TRACE_VERSION,
        ("ALTER TABLE outbox_effects ADD COLUMN trace_parent TEXT NOT NULL DEFAULT ''",),
    )


_COMMON = "tenant_id, user_id, seq, lane, kind, idempotency_key, payload, attempts, enqueued_us"
_QUEUED = f"{_COMMON}, next_attempt_us, last_error, trace_parent"
_DEAD = f"{_COMMON}, dead_us, reason"
# Row `e` is the first effect of its lane.
_LANE_HEAD = (
    "NOT EXISTS (SELECT 1 FROM outbox_effects p WHERE p.tenant_id = e.tenant_id AND p.user_id = e.user_id "
    "AND p.lane = e.lane AND p.seq < e.seq)"
)


def _queued(row: Row) -> QueuedEffect:
    tenant_id, user_id, seq, lane, kind, key, payload, attempts, enqueued_us, next_us, error = row[
        :11
    ]
    return QueuedEffect(
        tenant_id, user_id, int(seq), lane, kind, key, bytes(payload),
        int(attempts), int(enqueued_us), int(next_us), error, row[11],
    )  # fmt: skip


def _dead(row: Row) -> DeadEffect:
    tenant_id, user_id, seq, lane, kind, key, payload, attempts, enqueued_us, dead_us, why = row
    return DeadEffect(
        tenant_id, user_id, int(seq), lane, kind, key, bytes(payload),
        int(attempts), int(enqueued_us), int(dead_us), why,
    )  # fmt: skip


def _lock(tenant_id: str, user_id: str) -> tuple[str, str, str]:
    return ("outbox", tenant_id, user_id)


def outbox_lock(tenant_id: str, user_id: str) -> tuple[str, str, str]:
    """The write-lock key of the user's outbox rows (for `Database.write`)."""
    return _lock(tenant_id, user_id)


async def enqueue_in(
    tx: SqlTx, tenant_id: str, user_id: str, effects: Sequence[Effect], now_us: int
) -> None:
    """Queue effects inside the caller's own write transaction, so they commit (or not)
    with the rows that caused them; the transaction must hold `outbox_lock(tenant, user)`.
    The drainer finds them on its next pass (or an `enqueue_and_deliver` of the same keys)."""
    if effects:
        await _insert(tx, tenant_id, user_id, effects, now_us)


async def _insert(
    tx: SqlTx,
    tenant_id: str,
    user_id: str,
    effects: Sequence[Effect],
    now_us: int,
    trace_parent: str | None = None,
) -> None:
    """Insert effects after the user's last; they keep the traceparent of the call queueing
    them (the current span's unless `trace_parent` is given)."""
    parent = current_traceparent() if trace_parent is None else trace_parent
    # Sequence numbers are per user and never reused while a row (queued or dead) holds one.
    top = await tx.fetchone(
        "SELECT MAX(seq) FROM (SELECT seq FROM outbox_effects WHERE tenant_id = ? AND user_id = ? "
        "UNION ALL SELECT seq FROM outbox_dead WHERE tenant_id = ? AND user_id = ?) AS seqs",
        (tenant_id, user_id, tenant_id, user_id),
    )
    seq = int(top[0]) if top is not None and top[0] is not None else 0
    rows: list[Sequence[Any]] = []
    for effect in effects:
        seq += 1
        rows.append(
            (
                tenant_id,
                user_id,
                seq,
                effect.lane,
                effect.kind,
                effect.key,
                effect.payload,
                now_us,
                now_us,
                parent,
            )
        )
    await tx.executemany(
        "INSERT INTO outbox_effects (tenant_id, user_id, seq, lane, kind, idempotency_key, payload, attempts, "
        "enqueued_us, next_attempt_us, leased_until_us, last_error, trace_parent) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, 0, '', ?) ON CONFLICT DO NOTHING",
        rows,
    )


@dataclass(frozen=True)
class PurgeFilter:
    """Which of a user's queued and dead effects a forget drops: those of these keys or
    key prefixes, of these kinds, or whose payload carries one of these byte strings
    (matched case-insensitively for ASCII letters). An empty filter matches nothing."""

    keys: tuple[str, ...] = ()
    key_prefixes: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    carrying: tuple[bytes, ...] = ()

    def matches(self, kind: str, key: str, payload: bytes) -> bool:
        if key in self.keys or kind in self.kinds:
            return True
        if any(key.startswith(prefix) for prefix in self.key_prefixes):
            return True
        folded = payload.lower()
        return any(needle and needle.lower() in folded for needle in self.carrying)


async def purge_in(tx: SqlTx, tenant_id: str, user_id: str, which: PurgeFilter) -> int:
    """Drop the user's queued and dead effects the filter matches, inside the caller's write
    transaction (which must hold `outbox_lock(tenant, user)`); how many were dropped. A
    forget runs this in the transaction that forgets, so no queued copy outlives it."""
    dropped = 0
    for table in ("outbox_effects", "outbox_dead"):
        rows = await tx.fetchall(
            f"SELECT seq, kind, idempotency_key, payload FROM {table} WHERE tenant_id = ? AND user_id = ?",
            (tenant_id, user_id),
        )
        seqs = [
            int(seq) for seq, kind, key, payload in rows if which.matches(kind, key, bytes(payload))
        ]
        for start in range(0, len(seqs), 500):
            chunk = seqs[start : start + 500]
            await tx.execute(
                f"DELETE FROM {table} WHERE tenant_id = ? AND user_id = ? AND seq IN ({marks(len(chunk))})",
                (tenant_id, user_id, *chunk),
            )
        dropped += len(seqs)
    return dropped


@dataclass(frozen=True)
class Claim:
    """Which lanes' first effects to claim, for how long, and whether one still backing
    off may be taken early."""

    lanes: tuple[str, ...]
    lease_us: int
    early: bool = False


async def _claim_heads(
    tx: SqlTx, tenant_id: str, user_id: str, claim: Claim, now_us: int
) -> dict[str, QueuedEffect]:
    if not claim.lanes:
        return {}
    rows = await tx.fetchall(
        f"SELECT {_QUEUED}, leased_until_us FROM outbox_effects e "
        f"WHERE e.tenant_id = ? AND e.user_id = ? AND e.lane IN ({marks(len(claim.lanes))}) AND {_LANE_HEAD}",
        (tenant_id, user_id, *claim.lanes),
    )
    heads = {}
    for row in rows:
        effect = _queued(row)
        if int(row[12]) <= now_us and (claim.early or effect.next_attempt_us <= now_us):
            heads[effect.lane] = effect
    if heads:
        seqs = [effect.seq for effect in heads.values()]
        await tx.execute(
            f"UPDATE outbox_effects SET leased_until_us = ? WHERE tenant_id = ? AND user_id = ? "
            f"AND seq IN ({marks(len(seqs))})",
            (now_us + claim.lease_us, tenant_id, user_id, *seqs),
        )
    return heads


class EffectQueue:
    """The outbox's rows; every change of one user's rows is serialised on the user."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def enqueue(
        self,
        tenant_id: str,
        user_id: str,
        effects: Sequence[Effect],
        now_us: int,
        claim: Claim | None = None,
    ) -> dict[str, QueuedEffect]:
        """Queue the effects in order, due now (keys already queued are left as they are);
        with `claim`, also claim the first effect of each of its lanes, by lane."""
        async with self._db.write(*_lock(tenant_id, user_id)) as tx:
            if effects:
                await _insert(tx, tenant_id, user_id, effects, now_us)
            return (
                {} if claim is None else await _claim_heads(tx, tenant_id, user_id, claim, now_us)
            )

    async def due_lanes(self, now_us: int, limit: int) -> list[tuple[str, str, str]]:
        """(tenant, user, lane) whose first effect is due and not claimed, most overdue first."""
        rows = await self._read(
            "SELECT e.tenant_id, e.user_id, e.lane FROM outbox_effects e "
            f"WHERE e.next_attempt_us <= ? AND e.leased_until_us <= ? AND {_LANE_HEAD} "
            "ORDER BY e.next_attempt_us, e.seq LIMIT ?",
            (now_us, now_us, limit),
        )
        return [(row[0], row[1], row[2]) for row in rows]

    async def next_due_us(self) -> int | None:
        """When the earliest effect can next be attempted; None when the outbox is empty."""
        # Only each lane's first effect counts: the ones behind it wait for it, not for their time.
        rows = await self._read(
            "SELECT MIN(CASE WHEN e.leased_until_us > e.next_attempt_us "
            f"THEN e.leased_until_us ELSE e.next_attempt_us END) FROM outbox_effects e WHERE {_LANE_HEAD}"
        )
        return None if not rows or rows[0][0] is None else int(rows[0][0])

    async def claim_head(
        self, tenant_id: str, user_id: str, lane: str, now_us: int, claim: Claim
    ) -> QueuedEffect | None:
        """The lane's first effect, hidden from other drainers for the claim's lease; None
        when the lane is empty, claimed elsewhere, or (unless `claim.early`) not yet due."""
        async with self._db.write(*_lock(tenant_id, user_id)) as tx:
            heads = await _claim_heads(
                tx, tenant_id, user_id, Claim((lane,), claim.lease_us, claim.early), now_us
            )
            return heads.get(lane)

    async def complete(
        self,
        effect: QueuedEffect,
        follow_ups: Sequence[Effect],
        now_us: int,
        claim: Claim | None = None,
    ) -> QueuedEffect | None:
        """Remove a delivered effect and queue its follow-ups, in one transaction; with
        `claim`, also claim the next effect of the same lane."""
        tenant_id, user_id = effect.tenant_id, effect.user_id
        async with self._db.write(*_lock(tenant_id, user_id)) as tx:
            await tx.execute(
                "DELETE FROM outbox_effects WHERE tenant_id = ? AND user_id = ? AND seq = ?",
                (tenant_id, user_id, effect.seq),
            )
            if follow_ups:
                # A follow-up belongs to the turn that queued the effect it follows.
                await _insert(tx, tenant_id, user_id, follow_ups, now_us, effect.trace_parent)
            # The delivered effect carried the user's words: its bytes go too, soon.
            self._db.reclaim_deleted_soon("outbox_effects")
            if claim is None:
                return None
            next_claim = Claim((effect.lane,), claim.lease_us, claim.early)
            return (await _claim_heads(tx, tenant_id, user_id, next_claim, now_us)).get(effect.lane)

    async def reschedule(
        self, effect: QueuedEffect, attempts: int, next_attempt_us: int, error: str
    ) -> None:
        """Record a failed attempt and release the claim."""
        async with self._db.write(*_lock(effect.tenant_id, effect.user_id)) as tx:
            await tx.execute(
                "UPDATE outbox_effects SET attempts = ?, next_attempt_us = ?, leased_until_us = 0, last_error = ? "
                "WHERE tenant_id = ? AND user_id = ? AND seq = ?",
                (
                    attempts,
                    next_attempt_us,
                    error[:500],
                    effect.tenant_id,
                    effect.user_id,
                    effect.seq,
                ),
            )

    async def bury(self, effect: QueuedEffect, attempts: int, why: str, now_us: int) -> None:
        """Move a failed effect to the dead letters."""
        async with self._db.write(*_lock(effect.tenant_id, effect.user_id)) as tx:
            await tx.execute(
                f"INSERT INTO outbox_dead ({_DEAD}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    effect.tenant_id, effect.user_id, effect.seq, effect.lane, effect.kind, effect.key,
                    effect.payload, attempts, effect.enqueued_us, now_us, why[:500],
                ),
            )  # fmt: skip
            await tx.execute(
                "DELETE FROM outbox_effects WHERE tenant_id = ? AND user_id = ? AND seq = ?",
                (effect.tenant_id, effect.user_id, effect.seq),
            )

    async def pending(self, tenant_id: str, user_id: str) -> list[QueuedEffect]:
        """The user's queued effects in order."""
        rows = await self._read(
            f"SELECT {_QUEUED} FROM outbox_effects WHERE tenant_id = ? AND user_id = ? ORDER BY seq",
            (tenant_id, user_id),
        )
        return [_queued(row) for row in rows]

    async def dead(self, tenant_id: str, user_id: str) -> list[DeadEffect]:
        """The user's dead effects in the order they were queued."""
        rows = await self._read(
            f"SELECT {_DEAD} FROM outbox_dead WHERE tenant_id = ? AND user_id = ? ORDER BY seq",
            (tenant_id, user_id),
        )
        return [_dead(row) for row in rows]

    async def count_pending(self, tenant_id: str, user_id: str, kind: str | None = None) -> int:
        """How many of the user's effects (of one kind, when given) wait."""
        sql = "SELECT COUNT(*) FROM outbox_effects WHERE tenant_id = ? AND user_id = ?"
        params: tuple[str, ...] = (tenant_id, user_id)
        if kind is not None:
            sql, params = sql + " AND kind = ?", (*params, kind)
        rows = await self._read(sql, params)
        return int(rows[0][0])

    async def purge_matching(self, tenant_id: str, user_id: str, which: PurgeFilter) -> int:
        """Drop the user's queued and dead effects the filter matches; how many."""
        async with self._db.write(*_lock(tenant_id, user_id)) as tx:
            return await purge_in(tx, tenant_id, user_id, which)

    async def tally(self, tenant_id: str, user_id: str) -> list[tuple[str, str, int]]:
        """The user's effects as (state, kind, count), state "pending" or "dead", sorted."""
        async with self._db.read() as tx:
            pending = await tx.fetchall(
                "SELECT kind, COUNT(*) FROM outbox_effects WHERE tenant_id = ? AND user_id = ? GROUP BY kind",
                (tenant_id, user_id),
            )
            dead = await tx.fetchall(
                "SELECT kind, COUNT(*) FROM outbox_dead WHERE tenant_id = ? AND user_id = ? GROUP BY kind",
                (tenant_id, user_id),
            )
        counts = [("pending", str(k), int(n)) for k, n in pending]
        counts += [("dead", str(k), int(n)) for k, n in dead]
        return sorted(counts)

    async def purge(self, tenant_id: str, user_id: str) -> None:
        """Drop every queued and dead effect of the user (their payloads may hold what they said)."""
        async with self._db.write(*_lock(tenant_id, user_id)) as tx:
            await tx.execute(
                "DELETE FROM outbox_effects WHERE tenant_id = ? AND user_id = ?",
                (tenant_id, user_id),
            )
            await tx.execute(
                "DELETE FROM outbox_dead WHERE tenant_id = ? AND user_id = ?", (tenant_id, user_id)
            )

    async def depth(self) -> tuple[int, int]:
        """How many effects wait, and how many are dead, over every user."""
        rows = await self._read(
            "SELECT (SELECT COUNT(*) FROM outbox_effects), (SELECT COUNT(*) FROM outbox_dead)"
        )
        return int(rows[0][0]), int(rows[0][1])

    async def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        async with self._db.read() as tx:
            return await tx.fetchall(sql, params)
