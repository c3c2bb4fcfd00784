"""The capsule in SQL: one text for SQLite (a file under data_dir) and PostgreSQL (schema
`atom_extractor`). Writers of one user serialise on the database's per-user write lock;
atom versions catch any writer that planned on a state that has since moved on."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Protocol

from memmesh.engines.atom_extractor.adapters import store_codec as codec
from memmesh.engines.atom_extractor.domain.capsule import (
    AtomRecord,
    CapsuleCommit,
    CorrectionPair,
    EffectKind,
    LateErasures,
    LocalErasure,
    ProvenanceEntry,
    RejectionEntry,
)
from memmesh.engines.atom_extractor.domain.references import MAX_ATOMS_PER_REFERENCE
from memmesh.engines.atom_extractor.learning.envelope import UserSealer
from memmesh.engines.atom_extractor.outbox import LANES, queued_form
from memmesh.errors import VersionMismatch
from memmesh.extraction.patterns import Observation, ObservationWrite
from memmesh.outbox import (
    PurgeFilter,
    enqueue_in,
    outbox_lock,
    outbox_migration,
    outbox_trace_migration,
    purge_in,
    wall_clock_us,
)
from memmesh.storage.migrations import Migration
from memmesh.storage.sql import Database, Dialect, SqlTx, marks, open_database

ENGINE = "atom_extractor"
# Rows of one topic read for references: the domain's bound on live atoms, with room for
# superseded copies of them.
READ_PER_REFERENCE = 4 * MAX_ATOMS_PER_REFERENCE
# The kind a correction pair is sealed under (bound into its ciphertext with its turn id).
CORRECTION_RECORD = "correction"


class UserKeys(Protocol):
    """Where the capsule's per-user sealers come from (the learning capsule's data keys)."""

    async def sealer(self, tenant_id: str, user_id: str, create: bool) -> UserSealer | None: ...


def migrations_for(dialect: Dialect) -> tuple[Migration, ...]:
    """The capsule's schema in the dialect's few type names."""
    big = dialect.big_int
    serial = (
        "seq INTEGER PRIMARY KEY AUTOINCREMENT"
        if dialect is Dialect.SQLITE
        else "seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
    )
    return (
        Migration(
            1,
            (
                f"""CREATE TABLE capsule_atoms (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, atom_id TEXT NOT NULL,
                atom_key TEXT NOT NULL, version {big} NOT NULL, body TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, atom_id))""",
                "CREATE INDEX capsule_atoms_by_key ON capsule_atoms (tenant_id, user_id, atom_key, atom_id)",
                """CREATE TABLE capsule_markers (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, marker TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, marker))""",
                f"""CREATE TABLE capsule_corrections (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, turn_id TEXT NOT NULL,
                heard TEXT NOT NULL, meant TEXT NOT NULL, record_time_us {big} NOT NULL,
                PRIMARY KEY (tenant_id, user_id, turn_id))""",
                f"""CREATE TABLE capsule_rejections (
                {serial}, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
                reject_time_us {big} NOT NULL, body TEXT NOT NULL)""",
                "CREATE INDEX capsule_rejections_by_user ON capsule_rejections (tenant_id, user_id, reject_time_us)",
                f"""CREATE TABLE capsule_provenance (
                {serial}, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
                record_time_us {big} NOT NULL, body TEXT NOT NULL)""",
                "CREATE INDEX capsule_provenance_by_user ON capsule_provenance (tenant_id, user_id, record_time_us)",
                """CREATE TABLE capsule_session_refs (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
                atom_ids TEXT NOT NULL, PRIMARY KEY (tenant_id, user_id, session_id))""",
                f"""CREATE TABLE capsule_effects (
                {serial}, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
                kind TEXT NOT NULL, payload TEXT NOT NULL)""",
                "CREATE INDEX capsule_effects_by_user ON capsule_effects (tenant_id, user_id, seq)",
            ),
        ),
        outbox_migration(dialect, 2),
        # The shared outbox replaces capsule_effects: what it still holds moves over, in order.
        Migration(3, (_adopt_legacy_effects(dialect), "DROP TABLE capsule_effects")),
        # Each atom's topics, so a turn finds the atoms it refers to without reading them all
        # (filled for atoms stored before this step when the store opens).
        Migration(
            4,
            (
                """CREATE TABLE capsule_atom_topics (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, topic TEXT NOT NULL, atom_id TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, atom_id, topic))""",
                "CREATE INDEX capsule_atom_topics_by_topic ON capsule_atom_topics (tenant_id, user_id, topic, atom_id)",
            ),
        ),
        # Which session each processed turn belongs to (a forgotten conversation's atoms), and
        # the marks of forgets a late extraction must see (ids and keyed hashes, no words).
        Migration(
            5,
            (
                """CREATE TABLE capsule_turn_sessions (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL, turn_id TEXT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, session_id, turn_id))""",
                f"""CREATE TABLE capsule_erasures (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, kind TEXT NOT NULL, subject TEXT NOT NULL,
                erase_time_us {big} NOT NULL, PRIMARY KEY (tenant_id, user_id, kind, subject))""",
            ),
        ),
        # The last turn said (no command) in each session (ids only): what "forget that" means.
        Migration(
            6,
            (
                """CREATE TABLE capsule_session_last (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
                turn_id TEXT NOT NULL, PRIMARY KEY (tenant_id, user_id, session_id))""",
            ),
        ),
        # The pattern learner's behaviour observations: a request's signature per turn, with
        # its session and time (no turn text), bounded per user.
        Migration(
            7,
            (
                f"""CREATE TABLE capsule_observations (
                tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, turn_id TEXT NOT NULL,
                signature TEXT NOT NULL, session_id TEXT NOT NULL, observe_time_us {big} NOT NULL,
                verb TEXT NOT NULL, label TEXT NOT NULL, kind TEXT NOT NULL, negated INTEGER NOT NULL,
                PRIMARY KEY (tenant_id, user_id, turn_id, signature))""",
                "CREATE INDEX capsule_observations_by_time ON capsule_observations "
                "(tenant_id, user_id, observe_time_us)",
            ),
        ),
        outbox_trace_migration(),
        # Correction pairs are sealed with the user's learning data key: the pair lives in
        # `sealed` and heard/meant stay empty. Rows written before this step are sealed when
        # the store opens (a migration holds no keys), and their clear bytes reclaimed.
        Migration(8, (f"ALTER TABLE capsule_corrections ADD COLUMN sealed {dialect.blob}",)),
    )


def _adopt_legacy_effects(dialect: Dialect) -> str:
    lanes = " ".join(f"WHEN '{kind.value}' THEN '{lane}'" for kind, lane in LANES.items())
    payload = (
        "CAST(payload AS BLOB)" if dialect is Dialect.SQLITE else "convert_to(payload, 'UTF8')"
    )
    return (
        "INSERT INTO outbox_effects (tenant_id, user_id, seq, lane, kind, idempotency_key, payload, attempts, "
        "enqueued_us, next_attempt_us, leased_until_us, last_error) "
        f"SELECT tenant_id, user_id, seq, CASE kind {lanes} ELSE 'threads' END, kind, "
        f"'legacy#' || seq, {payload}, 0, 0, 0, 0, '' FROM capsule_effects"
    )


def _bytewise(dialect: Dialect) -> str:
    return dialect.bytewise


class SqlCapsuleStore:
    """The capsule store over one engine database."""

    def __init__(
        self, database: Database, keys: UserKeys, close_keys: Callable[[], Awaitable[None]] | None
    ) -> None:
        self._db = database
        self._keys = keys
        # Keys the store opened itself (no key source given) close with it.
        self._close_keys = close_keys
        # One reclaim at a time, off the request path; a forget during one asks for another.
        self._reclaim: asyncio.Task[None] | None = None
        self._reclaim_again = False

    @property
    def database(self) -> Database:
        return self._db

    @classmethod
    async def open(
        cls, storage_url: str, data_dir: Path, keys: UserKeys | None = None
    ) -> SqlCapsuleStore:
        """The store; without `keys`, over the learning store beside it, with the keys its
        settings give (the engine passes the ones its learning capsule uses)."""
        close_keys = None
        if keys is None:
            from memmesh.engines.atom_extractor.learning.wiring import capsule_keys_of_settings

            keys, close_keys = await capsule_keys_of_settings(storage_url, data_dir)
        database = await open_database(storage_url, ENGINE, migrations_for, data_dir)
        store = cls(database, keys, close_keys)
        await store._index_topics_of_older_atoms()
        await store._seal_clear_corrections()
        return store

    async def _seal_clear_corrections(self) -> None:
        """Correction pairs stored in clear by an earlier version get sealed with their
        owner's data key, and the clear bytes are reclaimed (once: nothing to do after)."""
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                "SELECT tenant_id, user_id, turn_id, heard, meant FROM capsule_corrections "
                "WHERE sealed IS NULL"
            )
        if not rows:
            return
        users = sorted({(str(t), str(u)) for t, u, *_ in rows})
        sealers = {user: await self._keys.sealer(*user, create=True) for user in users}
        sealed = [
            (_sealed_pair(sealer, str(turn_id), str(heard), str(meant)), t, u, turn_id)
            for t, u, turn_id, heard, meant in rows
            for sealer in [sealers[(str(t), str(u))]]
            if sealer is not None
        ]
        async with self._db.write("capsule-corrections") as tx:
            await tx.executemany(
                "UPDATE capsule_corrections SET heard = '', meant = '', sealed = ? "
                "WHERE tenant_id = ? AND user_id = ? AND turn_id = ? AND sealed IS NULL",
                sealed,
            )
        await self._db.reclaim_erased(("capsule_corrections",))

    async def _index_topics_of_older_atoms(self) -> None:
        """Atoms stored before the topic index get their rows (once: nothing to do after)."""
        async with self._db.read() as tx:
            indexed = await tx.fetchone("SELECT 1 FROM capsule_atom_topics LIMIT 1")
            stored = await tx.fetchone("SELECT 1 FROM capsule_atoms LIMIT 1")
        if indexed is not None or stored is None:
            return
        async with self._db.write("capsule-topics") as tx:
            rows = await tx.fetchall("SELECT tenant_id, user_id, body FROM capsule_atoms")
            topics = [
                (tenant_id, user_id, topic, atom.atom_id)
                for tenant_id, user_id, body in rows
                for atom in [codec.atom_of(str(body))]
                for topic in set(atom.topics)
            ]
            if topics:
                await tx.executemany(
                    "INSERT INTO capsule_atom_topics VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    topics,
                )

    async def load_related(
        self,
        tenant_id: str,
        user_id: str,
        keys: Sequence[str],
        atom_ids: Sequence[str],
        topics: Sequence[str],
    ) -> list[AtomRecord]:
        scope = (tenant_id, user_id)
        found: dict[str, AtomRecord] = {}
        async with self._db.read() as tx:
            for column, values in (("atom_key", keys), ("atom_id", atom_ids)):
                for atom in await _atoms_where(
                    tx, scope, f"{column} IN ({marks(len(values))})", values
                ):
                    found[atom.atom_id] = atom
            if topics:
                # Only the atoms of words that name few atoms: a turn refers to no atom by a
                # word shared by many (references.MAX_ATOMS_PER_REFERENCE counts the live ones
                # among those read; superseded copies are read up to a margin).
                named = await tx.fetchall(
                    "SELECT atom_id FROM capsule_atom_topics WHERE tenant_id = ? AND user_id = ? "
                    "AND topic IN (SELECT topic FROM capsule_atom_topics "
                    "WHERE tenant_id = ? AND user_id = ? "
                    f"AND topic IN ({marks(len(topics))}) GROUP BY topic HAVING COUNT(*) <= ?)",
                    (*scope, *scope, *topics, READ_PER_REFERENCE),
                )
                wanted = sorted({str(row[0]) for row in named} - found.keys())
                for atom in await _atoms_where(
                    tx, scope, f"atom_id IN ({marks(len(wanted))})", wanted
                ):
                    found[atom.atom_id] = atom
            partners = sorted(
                {a.conflict_atom_id for a in found.values() if a.conflict_atom_id} - found.keys()
            )
            for atom in await _atoms_where(
                tx, scope, f"atom_id IN ({marks(len(partners))})", partners
            ):
                found[atom.atom_id] = atom
        return sorted(found.values(), key=lambda a: (a.key, a.atom_id))

    async def load_atoms(self, tenant_id: str, user_id: str) -> list[AtomRecord]:
        c = _bytewise(self._db.dialect)
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                f"SELECT body FROM capsule_atoms WHERE tenant_id = ? AND user_id = ? "
                f"ORDER BY atom_key{c}, atom_id{c}",
                (tenant_id, user_id),
            )
        return [codec.atom_of(str(row[0])) for row in rows]

    async def atoms_by_id(
        self, tenant_id: str, user_id: str, atom_ids: Sequence[str]
    ) -> list[AtomRecord]:
        if not atom_ids:
            return []
        c = _bytewise(self._db.dialect)
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                f"SELECT body FROM capsule_atoms WHERE tenant_id = ? AND user_id = ? "
                f"AND atom_id IN ({marks(len(atom_ids))}) ORDER BY atom_key{c}, atom_id{c}",
                (tenant_id, user_id, *atom_ids),
            )
        return [codec.atom_of(str(row[0])) for row in rows]

    async def list_atoms(
        self, tenant_id: str, user_id: str, after: tuple[str, str] | None, limit: int
    ) -> list[AtomRecord]:
        key, atom_id = after or ("", "")
        c = _bytewise(self._db.dialect)
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                f"SELECT body FROM capsule_atoms WHERE tenant_id = ? AND user_id = ? "
                f"AND (atom_key{c}, atom_id{c}) > (?, ?) ORDER BY atom_key{c}, atom_id{c} LIMIT ?",
                (tenant_id, user_id, key, atom_id, limit),
            )
        return [codec.atom_of(str(row[0])) for row in rows]

    async def session_refs(self, tenant_id: str, user_id: str, session_id: str) -> tuple[str, ...]:
        async with self._db.read() as tx:
            row = await tx.fetchone(
                "SELECT atom_ids FROM capsule_session_refs WHERE tenant_id = ? AND user_id = ? AND session_id = ?",
                (tenant_id, user_id, session_id),
            )
        return codec.refs_of(str(row[0])) if row else ()

    async def is_processed(self, tenant_id: str, user_id: str, marker: str) -> bool:
        async with self._db.read() as tx:
            row = await tx.fetchone(
                "SELECT 1 FROM capsule_markers WHERE tenant_id = ? AND user_id = ? AND marker = ?",
                (tenant_id, user_id, marker),
            )
        return row is not None

    async def commit(self, tenant_id: str, user_id: str, commit: CapsuleCommit) -> bool:
        scope = (tenant_id, user_id)
        # Pairs to store need the user's key; a forget by words needs it to read the pairs.
        erasing = commit.erasure is not None and not commit.erasure.everything
        sealer = (
            await self._keys.sealer(tenant_id, user_id, create=bool(commit.corrections))
            if commit.corrections or erasing
            else None
        )
        async with self._db.write(*outbox_lock(tenant_id, user_id)) as tx:
            marked = await tx.execute(
                "INSERT INTO capsule_markers VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                (*scope, commit.marker),
            )
            if marked == 0:
                return False  # nothing written: the marker is stored already
            await _write(tx, scope, commit, sealer)
            if commit.erasure is not None:
                # Before this commit's own effects are queued: they carry what the forget needs.
                await _erase(tx, scope, commit.erasure, sealer)
            if commit.observations is not None:
                await _write_observations(
                    tx, scope, commit.observations, _bytewise(self._db.dialect)
                )
            await enqueue_in(
                tx, tenant_id, user_id, queued_form(commit.marker, commit.effects), wall_clock_us()
            )
        return True

    async def session_turns(self, tenant_id: str, user_id: str, session_id: str) -> list[str]:
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                "SELECT turn_id FROM capsule_turn_sessions WHERE tenant_id = ? AND user_id = ? "
                "AND session_id = ?",
                (tenant_id, user_id, session_id),
            )
        return sorted(str(row[0]) for row in rows)

    async def user_turns(self, tenant_id: str, user_id: str) -> list[str]:
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                "SELECT DISTINCT turn_id FROM capsule_turn_sessions WHERE tenant_id = ? AND user_id = ?",
                (tenant_id, user_id),
            )
        return sorted(str(row[0]) for row in rows)

    async def last_said(self, tenant_id: str, user_id: str, session_id: str) -> str:
        async with self._db.read() as tx:
            row = await tx.fetchone(
                "SELECT turn_id FROM capsule_session_last WHERE tenant_id = ? AND user_id = ? "
                "AND session_id = ?",
                (tenant_id, user_id, session_id),
            )
        return str(row[0]) if row else ""

    async def late_erasures(
        self, tenant_id: str, user_id: str, turn_id: str, session_id: str
    ) -> LateErasures:
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                "SELECT kind, subject, erase_time_us FROM capsule_erasures WHERE tenant_id = ? AND user_id = ? "
                "AND ((kind = 'turn' AND subject = ?) OR (kind = 'session' AND subject = ?) "
                "OR kind = 'user' OR kind = 'words' OR kind = 'dns')",
                (tenant_id, user_id, turn_id, session_id),
            )
        turn_erased, session_us, user_us = False, 0, 0
        words: list[tuple[frozenset[str], int]] = []
        blocked: list[frozenset[str]] = []
        for kind, subject, erase_us in rows:
            if kind == "turn":
                turn_erased = True
            elif kind == "session":
                session_us = int(erase_us)
            elif kind == "user":
                user_us = int(erase_us)
            elif kind == "dns":
                blocked.append(frozenset(str(subject).split(",")))
            else:
                words.append((frozenset(str(subject).split(",")), int(erase_us)))
        return LateErasures(turn_erased, session_us, user_us, tuple(words), tuple(blocked))

    async def observations(self, tenant_id: str, user_id: str) -> list[Observation]:
        c = _bytewise(self._db.dialect)
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                f"SELECT {_OBSERVATION_COLUMNS} FROM capsule_observations WHERE tenant_id = ? "
                f"AND user_id = ? ORDER BY observe_time_us, turn_id{c}, signature{c}",
                (tenant_id, user_id),
            )
        return [_observation_of(row) for row in rows]

    async def list_corrections(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[CorrectionPair]:
        """Newest first; none once the user's key is shredded (their pairs are unreadable)."""
        c = _bytewise(self._db.dialect)
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                "SELECT turn_id, record_time_us, sealed FROM capsule_corrections "
                f"WHERE tenant_id = ? AND user_id = ? ORDER BY record_time_us DESC, turn_id{c} DESC LIMIT ?",
                (tenant_id, user_id, limit),
            )
        # Read on every Brief: the key is fetched and unwrapped only for a user with pairs.
        if not rows:
            return []
        sealer = await self._keys.sealer(tenant_id, user_id, create=False)
        if sealer is None:
            return []
        pairs = [
            (str(turn_id), int(time_us), _opened_pair(sealer, str(turn_id), sealed))
            for turn_id, time_us, sealed in rows
        ]
        return [
            CorrectionPair(words[0], words[1], turn_id, time_us)
            for turn_id, time_us, words in pairs
            if words is not None
        ]

    async def list_rejections(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[RejectionEntry]:
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                "SELECT body FROM capsule_rejections WHERE tenant_id = ? AND user_id = ? "
                "ORDER BY reject_time_us DESC, seq DESC LIMIT ?",
                (tenant_id, user_id, limit),
            )
        return [codec.rejection_of(str(row[0])) for row in rows]

    async def list_provenance(
        self, tenant_id: str, user_id: str, limit: int
    ) -> list[ProvenanceEntry]:
        async with self._db.read() as tx:
            rows = await tx.fetchall(
                "SELECT body FROM capsule_provenance WHERE tenant_id = ? AND user_id = ? "
                "ORDER BY record_time_us DESC, seq DESC LIMIT ?",
                (tenant_id, user_id, limit),
            )
        return [codec.provenance_of(str(row[0])) for row in rows]

    async def reclaim_erased(self) -> None:
        """Start making the deleted bytes unreadable (WAL truncation, VACUUM) in the
        background: a forget's answer never waits for it."""
        if self._reclaim is not None and not self._reclaim.done():
            self._reclaim_again = True
            return
        self._reclaim = asyncio.create_task(self._reclaim_until_done())

    async def _reclaim_until_done(self) -> None:
        while True:
            self._reclaim_again = False
            await self._db.reclaim_erased(_ERASED_TABLES)
            if not self._reclaim_again:
                return

    async def close(self) -> None:
        if self._reclaim is not None:
            await self._reclaim  # best effort inside: it never raises
        await self._db.close()
        if self._close_keys is not None:
            await self._close_keys()


# Where a forget deletes the user's words (and delivered effects carried its terms).
_ERASED_TABLES = (
    "capsule_atoms",
    "capsule_atom_topics",
    "capsule_rejections",
    "capsule_provenance",
    "capsule_corrections",
    "capsule_observations",
    "outbox_effects",
    "outbox_dead",
)
_OBSERVATION_COLUMNS = "turn_id, session_id, observe_time_us, signature, verb, label, kind, negated"


def _observation_of(row: Sequence[object]) -> Observation:
    turn_id, session_id, time_us, signature, verb, label, kind, negated = row
    return Observation(
        str(turn_id),
        str(session_id),
        int(str(time_us)),
        str(signature),
        str(verb),
        str(label),
        str(kind),
        bool(negated),
    )


async def _write_observations(
    tx: SqlTx, scope: tuple[str, str], write: ObservationWrite, collate: str
) -> None:
    """Erase what the forget takes, add the turn's observations, evict the oldest beyond the
    support horizon and the per-user cap."""
    taken = write.erasure
    if taken is not None and taken.everything:
        await tx.execute(
            "DELETE FROM capsule_observations WHERE tenant_id = ? AND user_id = ?", scope
        )
    elif taken is not None:
        rows = await tx.fetchall(
            f"SELECT {_OBSERVATION_COLUMNS} FROM capsule_observations "
            "WHERE tenant_id = ? AND user_id = ?",
            scope,
        )
        gone = [(o.turn_id, o.signature) for o in map(_observation_of, rows) if taken.covers(o)]
        await _delete_observations(tx, scope, gone)
    if write.added:
        await tx.executemany(
            "INSERT INTO capsule_observations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            [
                (
                    *scope,
                    o.turn_id,
                    o.signature,
                    o.session_id,
                    o.observe_time_us,
                    o.verb,
                    o.label,
                    o.kind,
                    int(o.negated),
                )
                for o in write.added
            ],
        )
    await tx.execute(
        "DELETE FROM capsule_observations WHERE tenant_id = ? AND user_id = ? "
        "AND observe_time_us < ?",
        (*scope, write.keep_after_us),
    )
    row = await tx.fetchone(
        "SELECT COUNT(*) FROM capsule_observations WHERE tenant_id = ? AND user_id = ?", scope
    )
    over = int(str(row[0])) - write.cap if row else 0
    if over > 0:
        oldest = await tx.fetchall(
            "SELECT turn_id, signature FROM capsule_observations WHERE tenant_id = ? AND user_id = ? "
            f"ORDER BY observe_time_us, turn_id{collate}, signature{collate} LIMIT ?",
            (*scope, over),
        )
        await _delete_observations(tx, scope, [(str(t), str(s)) for t, s in oldest])


async def _delete_observations(
    tx: SqlTx, scope: tuple[str, str], keys: Sequence[tuple[str, str]]
) -> None:
    if keys:
        await tx.executemany(
            "DELETE FROM capsule_observations WHERE tenant_id = ? AND user_id = ? "
            "AND turn_id = ? AND signature = ?",
            [(*scope, turn_id, signature) for turn_id, signature in keys],
        )


async def _atoms_where(
    tx: SqlTx, scope: tuple[str, str], condition: str, values: Sequence[str]
) -> list[AtomRecord]:
    if not values:
        return []
    rows = await tx.fetchall(
        f"SELECT body FROM capsule_atoms WHERE tenant_id = ? AND user_id = ? AND {condition}",
        (*scope, *values),
    )
    return [codec.atom_of(str(row[0])) for row in rows]


def _sealed_pair(sealer: UserSealer, turn_id: str, heard: str, meant: str) -> bytes:
    return sealer.seal(CORRECTION_RECORD, turn_id, json.dumps([heard, meant]).encode())


def _opened_pair(sealer: UserSealer | None, turn_id: str, sealed: object) -> tuple[str, str] | None:
    """The pair, or None when it cannot be read (another key, or still awaiting its seal)."""
    if sealer is None or sealed is None:
        return None
    opened = sealer.open(CORRECTION_RECORD, turn_id, bytes(sealed))  # type: ignore[call-overload]
    if opened is None:
        return None
    heard, meant = json.loads(opened)
    return str(heard), str(meant)


async def _write(
    tx: SqlTx, scope: tuple[str, str], commit: CapsuleCommit, sealer: UserSealer | None
) -> None:
    for atom, expected in commit.upserts:
        body = codec.atom_body(atom)
        if expected == 0:
            written = await tx.execute(
                "INSERT INTO capsule_atoms VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (*scope, atom.atom_id, atom.key, atom.version, body),
            )
        else:
            written = await tx.execute(
                "UPDATE capsule_atoms SET atom_key = ?, version = ?, body = ? "
                "WHERE tenant_id = ? AND user_id = ? AND atom_id = ? AND version = ?",
                (atom.key, atom.version, body, *scope, atom.atom_id, expected),
            )
        if written != 1:
            raise VersionMismatch(f"atom {atom.atom_id} changed concurrently")
    # An atom's topic rows are written with it, and go with it.
    retopic = [atom for atom, _ in commit.upserts]
    batches = (
        (
            "DELETE FROM capsule_atoms WHERE tenant_id = ? AND user_id = ? AND atom_id = ?",
            [(*scope, atom_id) for atom_id in commit.deletes],
        ),
        (
            "DELETE FROM capsule_atom_topics WHERE tenant_id = ? AND user_id = ? AND atom_id = ?",
            [(*scope, atom_id) for atom_id in [*commit.deletes, *(a.atom_id for a in retopic)]],
        ),
        (
            "INSERT INTO capsule_atom_topics VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [
                (*scope, topic, atom.atom_id)
                for atom in retopic
                for topic in sorted(set(atom.topics))
            ],
        ),
        (
            "INSERT INTO capsule_corrections (tenant_id, user_id, turn_id, heard, meant, "
            "record_time_us, sealed) VALUES (?, ?, ?, '', '', ?, ?) ON CONFLICT DO NOTHING",
            [
                (
                    *scope,
                    p.turn_id,
                    p.record_time_us,
                    _sealed_pair(sealer, p.turn_id, p.heard, p.meant),
                )
                for p in commit.corrections
                if sealer is not None
            ],
        ),
        (
            "INSERT INTO capsule_rejections (tenant_id, user_id, reject_time_us, body) VALUES (?, ?, ?, ?)",
            [(*scope, r.reject_time_us, codec.rejection_body(r)) for r in commit.rejections],
        ),
        (
            "INSERT INTO capsule_provenance (tenant_id, user_id, record_time_us, body) VALUES (?, ?, ?, ?)",
            [(*scope, p.record_time_us, codec.provenance_body(p)) for p in commit.provenance],
        ),
    )
    for sql, rows in batches:
        if rows:  # an empty batch would still cost a round trip to the database
            await tx.executemany(sql, rows)
    if commit.turn_session is not None:
        turn_id, session_id = commit.turn_session
        await tx.execute(
            "INSERT INTO capsule_turn_sessions VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (*scope, session_id, turn_id),
        )
    if commit.last_said is not None:
        turn_id, session_id = commit.last_said
        await tx.execute(
            "INSERT INTO capsule_session_last VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id, session_id) DO UPDATE SET turn_id = excluded.turn_id",
            (*scope, session_id, turn_id),
        )
    if commit.session_refs is not None:
        session_id, atom_ids = commit.session_refs
        await tx.execute(
            "INSERT INTO capsule_session_refs VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id, session_id) DO UPDATE SET atom_ids = excluded.atom_ids",
            (*scope, session_id, codec.refs_body(atom_ids)),
        )


# Effects that carry a privacy rule or an erasure on its way: never dropped by a forget.
_KEPT_KINDS = frozenset(
    kind.value
    for kind in EffectKind
    if kind.value.startswith(
        ("THREAD_", "DEVICE_", "GUARD_", "STATE_", "INDEX_FORGET", "LEDGER_SHRED")
    )
)


def _holds(text: str, terms: Sequence[str]) -> bool:
    folded = text.casefold()
    return any(term.casefold() in folded for term in terms if term.strip())


async def _erase(
    tx: SqlTx, scope: tuple[str, str], erasure: LocalErasure, sealer: UserSealer | None
) -> None:
    """The forget's local part: log entries of the forgotten turns or holding the forgotten
    terms, queued effects still carrying them, and the marks a late extraction sees."""
    tenant_id, user_id = scope
    if erasure.everything:
        for table in (
            "capsule_rejections",
            "capsule_provenance",
            "capsule_corrections",
            "capsule_session_refs",
            "capsule_turn_sessions",
            "capsule_session_last",
            "capsule_erasures",
            "capsule_observations",
        ):
            await tx.execute(f"DELETE FROM {table} WHERE tenant_id = ? AND user_id = ?", scope)
        await purge_in(
            tx,
            tenant_id,
            user_id,
            PurgeFilter(kinds=tuple(k.value for k in EffectKind if k.value not in _KEPT_KINDS)),
        )
    else:
        rejections = await tx.fetchall(
            "SELECT seq, body FROM capsule_rejections WHERE tenant_id = ? AND user_id = ?", scope
        )
        provenance = await tx.fetchall(
            "SELECT seq, body FROM capsule_provenance WHERE tenant_id = ? AND user_id = ?", scope
        )
        for table, gone in (
            (
                "capsule_rejections",
                [
                    int(seq)
                    for seq, body in rejections
                    for entry in [codec.rejection_of(str(body))]
                    if entry.turn_id in erasure.turn_ids
                    or _holds(f"{entry.candidate_text}\n{entry.details}", erasure.terms)
                ],
            ),
            (
                "capsule_provenance",
                [
                    int(seq)
                    for seq, body in provenance
                    if codec.provenance_of(str(body)).turn_id in erasure.turn_ids
                ],
            ),
        ):
            for start in range(0, len(gone), 500):
                chunk = gone[start : start + 500]
                await tx.execute(
                    f"DELETE FROM {table} WHERE tenant_id = ? AND user_id = ? AND seq IN ({marks(len(chunk))})",
                    (*scope, *chunk),
                )
        corrections = await tx.fetchall(
            "SELECT turn_id, sealed FROM capsule_corrections WHERE tenant_id = ? AND user_id = ?",
            scope,
        )
        for turn_id, sealed in corrections:
            # A pair no key opens any more is unreadable already; its row goes by turn id.
            words = _opened_pair(sealer, str(turn_id), sealed) or ("", "")
            if str(turn_id) in erasure.turn_ids or _holds("\n".join(words), erasure.terms):
                await tx.execute(
                    "DELETE FROM capsule_corrections WHERE tenant_id = ? AND user_id = ? AND turn_id = ?",
                    (*scope, turn_id),
                )
        if erasure.terms:
            carrying = tuple(term.encode() for term in erasure.terms)
            rows = await tx.fetchall(
                "SELECT idempotency_key, kind, payload FROM outbox_effects WHERE tenant_id = ? AND user_id = ? "
                "UNION ALL SELECT idempotency_key, kind, payload FROM outbox_dead WHERE tenant_id = ? AND user_id = ?",
                (*scope, *scope),
            )
            keys = tuple(
                str(key)
                for key, kind, payload in rows
                if str(kind) not in _KEPT_KINDS
                and PurgeFilter(carrying=carrying).matches(str(kind), str(key), bytes(payload))
            )
            if keys:
                await purge_in(tx, tenant_id, user_id, PurgeFilter(keys=keys))
    if erasure.marks:
        await tx.executemany(
            "INSERT INTO capsule_erasures VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, kind, subject) "
            "DO UPDATE SET erase_time_us = excluded.erase_time_us",
            [(*scope, m.kind, m.subject, m.erase_time_us) for m in erasure.marks],
        )
