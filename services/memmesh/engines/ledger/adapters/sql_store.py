"""Ledger streams in one SQL store: an SQLite file or a PostgreSQL schema, both named
`ledger`. Triggers make the event table append-only; they are the one part written per
dialect. Subject keys live in their own mutable table beside the chain, so a key can be
destroyed (crypto-shredding) while the chain stays intact."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from memmesh.engines.ledger.domain.chain import (
    GENESIS_HASH,
    AppendOutcome,
    Existing,
    ExpectedHead,
    NewEvent,
    PlannedAppend,
    StoredEvent,
    decode_attributes,
    encode_attributes,
    plan_append,
)
from memmesh.engines.ledger.domain.subject_keys import (
    ShredOutcome,
    SubjectKey,
    new_subject_key,
    shred_event,
)
from memmesh.errors import PreconditionFailed, VersionMismatch
from memmesh.storage.migrations import Migration
from memmesh.storage.sql import Database, Dialect, Row, SqlTx, marks

# Rows read per query when streaming a stream: bounded memory for a long history.
READ_PAGE = 500

_KEY_QUERY = "SELECT key_id, secret FROM subject_keys WHERE tenant_id = ? AND user_id = ?"
# The user's current key id next to the stream's head, in one row even for a new stream.
_KEY_AND_HEAD_FROM = (
    "FROM (SELECT 1 AS one) AS anchor "
    "LEFT JOIN subject_keys k ON k.tenant_id = ? AND k.user_id = ? "
    "LEFT JOIN (SELECT sequence, hash FROM ledger_events WHERE tenant_id = ? AND user_id = ? "
    "ORDER BY sequence DESC LIMIT 1) h ON 1 = 1"
)
_KEY_AND_HEAD_QUERY = f"SELECT k.key_id, h.sequence, h.hash {_KEY_AND_HEAD_FROM}"
# The same row with the sequence of the user's last event of one type (a conditional
# append), read from the ledger_events_type_head index in the same round trip.
_KEY_HEAD_AND_TYPE_HEAD_QUERY = (
    f"SELECT k.key_id, h.sequence, h.hash, t.sequence {_KEY_AND_HEAD_FROM} "
    "LEFT JOIN (SELECT sequence FROM ledger_events "
    "WHERE tenant_id = ? AND user_id = ? AND event_type = ? "
    "ORDER BY sequence DESC LIMIT 1) t ON 1 = 1"
)
_COLUMNS = "sequence, idempotency_key, event_type, reason_code, attributes, occur_time_us, previous_hash, hash"


def migrations(dialect: Dialect) -> tuple[Migration, ...]:
    """The schema steps: the event table and the dialect's append-only guard."""
    big, blob = dialect.big_int, dialect.blob
    table = f"""CREATE TABLE ledger_events (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                sequence {big} NOT NULL,
                idempotency_key TEXT NOT NULL,
                content_hash {blob} NOT NULL,
                event_type TEXT NOT NULL,
                reason_code TEXT NOT NULL,
                attributes TEXT NOT NULL,
                occur_time_us {big} NOT NULL,
                previous_hash {blob} NOT NULL,
                hash {blob} NOT NULL,
                PRIMARY KEY (tenant_id, user_id, sequence),
                UNIQUE (tenant_id, user_id, idempotency_key)
            )"""
    keys = f"""CREATE TABLE subject_keys (
                tenant_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                key_id TEXT NOT NULL,
                secret {blob} NOT NULL,
                created_us {big} NOT NULL,
                PRIMARY KEY (tenant_id, user_id)
            )"""
    # A conditional append reads the last event of one type in a user's stream: an index
    # seek, however many events of other types follow it.
    type_head = (
        "CREATE INDEX ledger_events_type_head "
        "ON ledger_events (tenant_id, user_id, event_type, sequence)"
    )
    return (
        Migration(1, (table, *_append_only(dialect))),
        Migration(2, (keys,)),
        Migration(3, (type_head,)),
    )


def _append_only(dialect: Dialect) -> tuple[str, ...]:
    match dialect:
        case Dialect.SQLITE:
            return (
                """CREATE TRIGGER ledger_events_no_update BEFORE UPDATE ON ledger_events
               BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END""",
                """CREATE TRIGGER ledger_events_no_delete BEFORE DELETE ON ledger_events
               BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END""",
            )
        case Dialect.POSTGRES:
            return (
                """CREATE FUNCTION ledger_forbid_change() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN RAISE EXCEPTION 'ledger is append-only'; END $$""",
                """CREATE TRIGGER ledger_events_no_update_delete BEFORE UPDATE OR DELETE ON ledger_events
               FOR EACH ROW EXECUTE FUNCTION ledger_forbid_change()""",
                """CREATE TRIGGER ledger_events_no_truncate BEFORE TRUNCATE ON ledger_events
               FOR EACH STATEMENT EXECUTE FUNCTION ledger_forbid_change()""",
            )


def _row_of(tenant_id: str, user_id: str, stored: StoredEvent) -> tuple[object, ...]:
    event = stored.event
    return (
        tenant_id,
        user_id,
        event.content_hash(),
        stored.sequence,
        event.idempotency_key,
        event.event_type,
        event.reason_code,
        encode_attributes(event.attributes),
        event.occur_time_us,
        stored.previous_hash,
        stored.hash,
    )


def _stored(row: Row) -> StoredEvent:
    sequence, key, event_type, reason, attributes, occur_us, previous, digest = row
    event = NewEvent(key, event_type, reason, decode_attributes(attributes), occur_us)
    return StoredEvent(sequence, event, bytes(previous), bytes(digest))


class SqlLedgerStore:
    """Writers of one stream serialise on the stream (BEGIN IMMEDIATE on SQLite, an
    advisory lock on PostgreSQL), so sequences stay gapless across any number of processes."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def append(
        self,
        tenant_id: str,
        user_id: str,
        events: Sequence[NewEvent],
        subject_key_id: str = "",
        expected_head: ExpectedHead | None = None,
    ) -> list[AppendOutcome]:
        if not events:
            return []
        async with self._db.write(tenant_id, user_id) as tx:
            head: Row | None = None
            type_head = 0
            if subject_key_id or expected_head is not None:
                # The key check and the type's head ride on the head query: no extra round
                # trip per append.
                scope = (tenant_id, user_id, tenant_id, user_id)
                if expected_head is None:
                    row = await tx.fetchone(_KEY_AND_HEAD_QUERY, scope)
                else:
                    row = await tx.fetchone(
                        _KEY_HEAD_AND_TYPE_HEAD_QUERY,
                        (*scope, tenant_id, user_id, expected_head.event_type),
                    )
                    type_head = int((row[3] if row else None) or 0)
                current_key, head_sequence, head_hash = row[:3] if row else (None, None, None)
                if subject_key_id and current_key != subject_key_id:
                    raise PreconditionFailed(
                        "subject_key_id is not the user's current subject key (it was shredded)"
                    )
                head = (head_sequence, head_hash) if head_sequence is not None else ()
            plan = await self._plan_in(tx, tenant_id, user_id, events, head)
            if plan.inserts and expected_head is not None and type_head != expected_head.sequence:
                # Checked after the duplicates: a retry whose events are all stored answers
                # as its first call did, even though the head has moved past them since.
                raise VersionMismatch(
                    f"the last {expected_head.event_type} event is at sequence {type_head}, "
                    f"not {expected_head.sequence}"
                )
            return await self._insert_in(tx, tenant_id, user_id, plan)

    async def _append_in(
        self, tx: SqlTx, tenant_id: str, user_id: str, events: Sequence[NewEvent]
    ) -> list[AppendOutcome]:
        """Seal and insert after the stream's head."""
        plan = await self._plan_in(tx, tenant_id, user_id, events, None)
        return await self._insert_in(tx, tenant_id, user_id, plan)

    async def _plan_in(
        self,
        tx: SqlTx,
        tenant_id: str,
        user_id: str,
        events: Sequence[NewEvent],
        head: Row | None,
    ) -> PlannedAppend:
        """What to insert after the stream's head, and every event's outcome; `head` is
        (sequence, hash) when already read, () for an empty stream, None to read it here."""
        keys = [event.idempotency_key for event in events]
        if head is None:
            head = await tx.fetchone(
                "SELECT sequence, hash FROM ledger_events WHERE tenant_id = ? AND user_id = ? "
                "ORDER BY sequence DESC LIMIT 1",
                (tenant_id, user_id),
            )
        rows = await tx.fetchall(
            "SELECT idempotency_key, sequence, hash, content_hash FROM ledger_events "
            f"WHERE tenant_id = ? AND user_id = ? AND idempotency_key IN ({marks(len(keys))})",
            (tenant_id, user_id, *keys),
        )
        return plan_append(
            tenant_id,
            user_id,
            head[0] if head else 0,
            bytes(head[1]) if head else GENESIS_HASH,
            events,
            {
                key: Existing(seq, bytes(digest), bytes(content))
                for key, seq, digest, content in rows
            },
        )

    async def _insert_in(
        self, tx: SqlTx, tenant_id: str, user_id: str, plan: PlannedAppend
    ) -> list[AppendOutcome]:
        await tx.executemany(
            f"INSERT INTO ledger_events (tenant_id, user_id, content_hash, {_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [_row_of(tenant_id, user_id, stored) for stored in plan.inserts],
        )
        return list(plan.outcomes)

    async def subject_key(self, tenant_id: str, user_id: str, now_us: int) -> SubjectKey:
        """The user's current key; the first call makes one (two racing first calls agree:
        the second finds the first's key under the stream's lock)."""
        async with self._db.read() as tx:
            row = await tx.fetchone(_KEY_QUERY, (tenant_id, user_id))
        if row is not None:
            return SubjectKey(row[0], bytes(row[1]))
        async with self._db.write(tenant_id, user_id) as tx:
            row = await tx.fetchone(_KEY_QUERY, (tenant_id, user_id))
            if row is not None:
                return SubjectKey(row[0], bytes(row[1]))
            key = new_subject_key()
            await tx.execute(
                "INSERT INTO subject_keys (tenant_id, user_id, key_id, secret, created_us) "
                "VALUES (?, ?, ?, ?, ?)",
                (tenant_id, user_id, key.key_id, key.secret, now_us),
            )
        return key

    async def shred_subject_key(self, tenant_id: str, user_id: str, now_us: int) -> ShredOutcome:
        """Delete the user's key and record SUBJECT_KEY_SHREDDED on the chain, in one
        transaction under the stream's lock (no append can use the key after it); then make
        the deleted bytes unreadable where the store can (WAL truncated, VACUUM)."""
        async with self._db.write(tenant_id, user_id) as tx:
            row = await tx.fetchone(_KEY_QUERY, (tenant_id, user_id))
            if row is None:
                return ShredOutcome(False, "", 0)
            key_id = str(row[0])
            await tx.execute(
                "DELETE FROM subject_keys WHERE tenant_id = ? AND user_id = ?",
                (tenant_id, user_id),
            )
            [outcome] = await self._append_in(tx, tenant_id, user_id, [shred_event(key_id, now_us)])
        await self._db.reclaim_erased(["subject_keys"])
        return ShredOutcome(True, key_id, outcome.sequence)

    async def read(
        self, tenant_id: str, user_id: str, from_sequence: int, limit: int
    ) -> AsyncIterator[StoredEvent]:
        """Events from from_sequence on, `READ_PAGE` rows a query, so a long stream is never
        held in memory; limit 0 means all."""
        next_sequence, remaining = max(from_sequence, 1), limit or None
        while True:
            page = READ_PAGE if remaining is None else min(READ_PAGE, remaining)
            async with self._db.read() as tx:
                rows = await tx.fetchall(
                    f"SELECT {_COLUMNS} FROM ledger_events WHERE tenant_id = ? AND user_id = ? "
                    "AND sequence >= ? ORDER BY sequence LIMIT ?",
                    (tenant_id, user_id, next_sequence, page),
                )
            for row in rows:
                yield _stored(row)
            if remaining is not None:
                remaining -= len(rows)
            if len(rows) < page or remaining == 0:
                return
            next_sequence = rows[-1][0] + 1

    async def close(self) -> None:
        await self._db.close()
