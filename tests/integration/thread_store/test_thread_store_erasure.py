"""Erasure in the ThreadStore and the RetrievalRanker, as real engine processes, on SQLite and
on PostgreSQL + Redis: after RedactTurns, ForgetSession and ForgetUser the forgotten words
are nowhere — not in GetTurnContext (working memory, rolling summary, bridge, entities), not
in Retrieve, not in Redis, not in any row, and on SQLite not in the database files' bytes
(main file and WAL)."""

from __future__ import annotations

import asyncio
import random
import string
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from google.protobuf.message import Message

from memmesh.common.v1 import bundle_pb2, memory_pb2, scope_pb2
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.settings import MeshSettings
from memmesh.runtime.supervisor import Mesh
from memmesh.runtime.timeconv import timestamp_of
from memmesh.storage.cache import user_key
from memmesh.testing.scopes import new_scope
from memmesh.text import entity_node_id
from memmesh.thread_store.v1 import thread_store_service_pb2 as pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as pb_grpc

SECOND_US = 1_000_000
HOUR_US = 3_600 * SECOND_US
CAPS = ranker_pb.RetrieveCaps(max_atoms=20, max_turns=50, max_digests=20)
SCHEMAS = ("thread_store", "retrieval_ranker")


def _word() -> str:
    """A capitalised made-up name no other test writes (so a byte scan finds only ours)."""
    return "Q" + "".join(random.choices(string.ascii_lowercase, k=9))


@dataclass
class Backend:
    name: str
    mesh: Mesh
    data_dir: Path
    postgres_url: str | None
    redis_url: str | None


@pytest.fixture(scope="module", params=["sqlite", "postgres+redis"])
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Backend]:
    data_dir = tmp_path_factory.mktemp(f"erasure-{request.param}")
    env = {"MEMMESH_DATA_DIR": str(data_dir), "MEMMESH_LOG_LEVEL": "WARNING"}
    postgres_url = redis_url = None
    if request.param == "sqlite":
        env["MEMMESH_STORAGE_URL"] = "sqlite"
    else:
        # A database of its own: no other mesh's drainer may deliver this one's effects.
        postgres_url = request.getfixturevalue("scratch_postgres_url")
        redis_url = request.getfixturevalue("redis_url")
        env["MEMMESH_STORAGE_URL"] = postgres_url
        env["MEMMESH_REDIS_URL"] = redis_url
    with Mesh(["retrieval_ranker", "thread_store"], env=env) as mesh:
        yield Backend(request.param, mesh, data_dir, postgres_url, redis_url)


@dataclass
class Clients:
    threads: pb_grpc.ThreadStoreServiceStub
    ranker: ranker_grpc.RetrievalRankerServiceStub


@pytest_asyncio.fixture
async def clients(backend: Backend) -> AsyncIterator[Clients]:
    token = MeshSettings().internal_token
    threads = engine_channel(backend.mesh.addrs["thread_store"], token, 10.0)
    ranker = engine_channel(backend.mesh.addrs["retrieval_ranker"], token, 10.0)
    yield Clients(
        pb_grpc.ThreadStoreServiceStub(threads), ranker_grpc.RetrievalRankerServiceStub(ranker)
    )
    await threads.close()
    await ranker.close()


def _turn(
    turn_id: str, session_id: str, text: str, time_us: int, user: bool = True
) -> memory_pb2.Turn:
    return memory_pb2.Turn(
        turn_id=turn_id,
        session_id=session_id,
        role=memory_pb2.ROLE_USER if user else memory_pb2.ROLE_ASSISTANT,
        text=text,
        time=timestamp_of(time_us),
    )


def _now_us() -> int:
    # Turn times near the server clock (the edge refuses times far from it).
    return int(time.time()) * SECOND_US - 4 * HOUR_US


async def _append(clients: Clients, scope: scope_pb2.UserScope, *turns: memory_pb2.Turn) -> None:
    for turn in turns:
        await clients.threads.AppendTurn(pb.AppendTurnRequest(scope=scope, turn=turn))


async def _context(
    clients: Clients, scope: scope_pb2.UserScope, session_id: str, now_us: int, nodes: list[str]
) -> pb.GetTurnContextResponse:
    """The turn context as a session start, so the resume part (the bridge) is answered too."""
    return await clients.threads.GetTurnContext(
        pb.GetTurnContextRequest(
            scope=scope,
            session_id=session_id,
            now=timestamp_of(now_us),
            entity_node_ids=nodes,
            mode=bundle_pb2.SESSION_MODE_SESSION_START,
        )
    )


async def _retrieve(
    clients: Clients, scope: scope_pb2.UserScope, query: str, now_us: int
) -> ranker_pb.RetrieveResponse:
    return await clients.ranker.Retrieve(
        ranker_pb.RetrieveRequest(scope=scope, query=query, now=timestamp_of(now_us), caps=CAPS)
    )


def _says(message: Message, *words: str) -> list[str]:
    text = str(message).casefold()
    return [word for word in words if word.casefold() in text]


async def _redis_values(backend: Backend, scope: scope_pb2.UserScope) -> list[bytes]:
    """Every key and value Redis holds for the user."""
    if backend.redis_url is None:
        return []
    client = aioredis.Redis.from_url(backend.redis_url)
    try:
        found: list[bytes] = []
        prefix = user_key(scope.tenant_id, scope.user_id)
        async for key in client.scan_iter(
            match=prefix.replace("{", "\\{").replace("}", "\\}") + "*"
        ):
            found.append(key)
            kind = (await client.type(key)).decode()
            if kind == "list":
                found.extend(await client.lrange(key, 0, -1))
            elif kind == "string":
                found.append(await client.get(key) or b"")
        return found
    finally:
        await client.aclose()


def _stored_bytes(backend: Backend, scope: scope_pb2.UserScope) -> list[bytes]:
    """On SQLite every byte of the engines' database files (main and WAL: free pages and old
    page images included); on PostgreSQL every column of every row of the user."""
    if backend.postgres_url is None:
        blobs = []
        for path in sorted(backend.data_dir.glob("*.sqlite3*")):
            blobs.append(path.read_bytes())
        return blobs
    blobs = []
    with psycopg.connect(backend.postgres_url, autocommit=True) as connection:
        for schema in SCHEMAS:
            tables = connection.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
                "AND table_type = 'BASE TABLE'",
                (schema,),
            ).fetchall()
            for (table,) in tables:
                columns = {
                    row[0]
                    for row in connection.execute(
                        "SELECT column_name FROM information_schema.columns "
                        "WHERE table_schema = %s AND table_name = %s",
                        (schema, table),
                    )
                }
                if "tenant_id" not in columns:
                    continue
                rows = connection.execute(
                    f'SELECT * FROM "{schema}"."{table}" WHERE tenant_id = %s',
                    (scope.tenant_id,),
                ).fetchall()
                for row in rows:
                    for value in row:
                        blobs.append(
                            bytes(value)
                            if isinstance(value, (bytes, memoryview))
                            else str(value).encode()
                        )
    return blobs


_RECLAIMED_TABLES = (("thread_store", "thread_turns"), ("retrieval_ranker", "ranker_documents"))


def _table_files(postgres_url: str) -> dict[tuple[str, str], int]:
    """The relation file number of the archive and of the index documents."""
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT n.nspname, c.relname, c.relfilenode FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE (n.nspname, c.relname) IN (('thread_store', 'thread_turns'), "
            "('retrieval_ranker', 'ranker_documents'))"
        ).fetchall()
    return {(row[0], row[1]): int(row[2]) for row in rows}


def _vacuumed_since(
    postgres_url: str, since: float, files_before: dict[tuple[str, str], int]
) -> None:
    """PostgreSQL reclaimed the archive and the index documents after `since`: a plain VACUUM
    (recorded in last_vacuum) or a rewrite (VACUUM FULL gives the table new files)."""
    deadline = time.monotonic() + 20
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        while True:
            rows = connection.execute(
                "SELECT schemaname, relname, EXTRACT(EPOCH FROM last_vacuum) FROM pg_stat_user_tables "
                "WHERE (schemaname, relname) IN (('thread_store', 'thread_turns'), "
                "('retrieval_ranker', 'ranker_documents'))"
            ).fetchall()
            vacuumed = {
                (row[0], row[1])
                for row in rows
                if row[2] is not None and float(row[2]) >= since - 1
            }
            files_now = _table_files(postgres_url)
            rewritten = {t for t in _RECLAIMED_TABLES if files_now.get(t) != files_before.get(t)}
            if len(vacuumed | rewritten) == 2:
                return
            assert time.monotonic() < deadline, f"no VACUUM after the erasure: {rows}"
            time.sleep(0.2)


async def _stored(backend: Backend, scope: scope_pb2.UserScope, *words: str) -> list[str]:
    """The words (as said, or lower-cased as in graph node ids) some stored byte holds."""
    needles = [w.encode() for w in words] + [w.lower().encode() for w in words]
    blobs = _stored_bytes(backend, scope) + await _redis_values(backend, scope)
    return sorted({n.decode() for n in needles for blob in blobs if n in blob})


async def _nowhere_stored(backend: Backend, scope: scope_pb2.UserScope, *words: str) -> None:
    """Waits (the outbox delivers in the background) until no stored byte holds the words."""
    deadline = time.monotonic() + 20
    while True:
        left = await _stored(backend, scope, *words)
        if not left:
            return
        assert time.monotonic() < deadline, f"still stored on {backend.name}: {left}"
        await asyncio.sleep(0.2)


async def _until_indexed(
    clients: Clients, scope: scope_pb2.UserScope, now_us: int, *words: str
) -> ranker_pb.RetrieveResponse:
    """Retrieve until every word is found: a turn's index entry goes on the first attempt or,
    when that misses (a loaded ranker), with the outbox soon after."""
    deadline = time.monotonic() + 20
    while True:
        found = await _retrieve(clients, scope, " ".join(words), now_us)
        if _says(found, *words) == list(words):
            return found
        assert time.monotonic() < deadline, f"Retrieve finds only {_says(found, *words)}"
        await asyncio.sleep(0.2)


async def _until_index_empty_of(
    clients: Clients, scope: scope_pb2.UserScope, now_us: int, *words: str
) -> ranker_pb.RetrieveResponse:
    deadline = time.monotonic() + 20
    while True:
        found = await _retrieve(clients, scope, " ".join(words), now_us)
        if not _says(found, *words):
            return found
        assert time.monotonic() < deadline, f"Retrieve still returns {_says(found, *words)}"
        await asyncio.sleep(0.2)


async def test_redact_turns_removes_the_forgotten_sentences_from_every_copy(
    backend: Backend, clients: Clients
) -> None:
    scope = new_scope()
    city, name = _word(), _word()
    t0 = _now_us()
    await _append(
        clients,
        scope,
        _turn(
            "t1",
            "s1",
            f"Hello there. My sister lives in {city}. I love hiking in the mountains.",
            t0,
        ),
        _turn("t2", "s1", f"{city} sounds lovely for your sister.", t0 + SECOND_US, user=False),
        _turn(
            "t3",
            "s1",
            f"I need to buy {name} a birthday present with {city} tiles.",
            t0 + 2 * SECOND_US,
        ),
        _turn("t4", "s1", "Let's plan the hiking trip next weekend.", t0 + 3 * SECOND_US),
    )
    # Two hours later a new session starts: s1 is digested and becomes the episode bridge.
    later = t0 + 2 * HOUR_US
    await _append(clients, scope, _turn("t5", "s2", "Good morning.", later))
    nodes = [entity_node_id(city), entity_node_id(name)]
    before_s1 = await _context(clients, scope, "s1", t0 + 4 * SECOND_US, nodes)
    before_s2 = await _context(clients, scope, "s2", later + SECOND_US, nodes)
    assert _says(before_s1, city, name) == [city, name]
    assert _says(before_s1.entities, city, name) == [city, name]
    assert _says(before_s2.resume, city)
    await _until_indexed(clients, scope, later, city, name)
    # The scan sees what is stored (so its empty answer below means something).
    assert city in await _stored(backend, scope, city)

    redacted = await clients.threads.RedactTurns(
        pb.RedactTurnsRequest(
            scope=scope,
            turn_ids=["t1", "t2", "unknown"],
            forget_terms=[f"  {city.upper()} "],
            now=timestamp_of(later),
        )
    )
    assert list(redacted.redacted_turn_ids) == ["t1", "t2"]
    assert list(redacted.emptied_turn_ids) == ["t2"]
    # No terms: the whole turn goes, the turn stays as a stub.
    emptied = await clients.threads.RedactTurns(
        pb.RedactTurnsRequest(scope=scope, turn_ids=["t3"], now=timestamp_of(later))
    )
    assert list(emptied.emptied_turn_ids) == ["t3"]
    # Idempotent: a repeat changes nothing.
    again = await clients.threads.RedactTurns(
        pb.RedactTurnsRequest(
            scope=scope, turn_ids=["t1", "t2"], forget_terms=[city], now=timestamp_of(later)
        )
    )
    assert list(again.redacted_turn_ids) == []

    after_s1 = await _context(clients, scope, "s1", t0 + 4 * SECOND_US, nodes)
    after_s2 = await _context(clients, scope, "s2", later + SECOND_US, nodes)
    assert _says(after_s1, city, name, "sister") == []
    assert _says(after_s2, city, name, "sister") == []
    assert list(after_s1.entities.nodes) == []
    turns = {t.turn_id: t.text for t in after_s1.working_memory.turns}
    # The rest of each turn stays; ordering and counts survive.
    assert list(turns) == ["t1", "t2", "t3", "t4"]
    assert turns["t1"] == "Hello there. I love hiking in the mountains."
    assert turns["t2"] == turns["t3"] == ""
    assert after_s2.resume.episode_bridge and "hiking" in after_s2.resume.episode_bridge.lower()
    found = await _until_index_empty_of(clients, scope, later, city, name, "sister")
    hiking = await _retrieve(clients, scope, "hiking mountains", later)
    assert "t1" in {c.doc_id for c in hiking.turns}
    assert "t3" not in {c.doc_id for c in found.turns}
    await _nowhere_stored(backend, scope, city, name)


async def test_forget_session_removes_the_conversation_and_answers_its_turn_ids(
    backend: Backend, clients: Clients
) -> None:
    scope = new_scope()
    secret, kept = _word(), _word()
    t0 = _now_us()
    await _append(
        clients,
        scope,
        _turn("a1", "secret", f"My doctor {secret} says the results are fine.", t0),
        _turn("a2", "secret", f"Remind me to call {secret} tomorrow.", t0 + SECOND_US),
        _turn("a3", "secret", "Thanks.", t0 + 2 * SECOND_US, user=False),
    )
    later = t0 + 2 * HOUR_US
    await _append(clients, scope, _turn("b1", "open", f"I met {kept} at the market.", later))
    assert _says(await _context(clients, scope, "open", later + SECOND_US, []), secret)

    forgotten = await clients.threads.ForgetSession(
        pb.ForgetSessionRequest(scope=scope, session_id="secret", now=timestamp_of(later))
    )
    assert forgotten.forgotten and list(forgotten.turn_ids) == ["a1", "a2", "a3"]
    repeat = await clients.threads.ForgetSession(
        pb.ForgetSessionRequest(scope=scope, session_id="secret", now=timestamp_of(later))
    )
    assert not repeat.forgotten and list(repeat.turn_ids) == ["a1", "a2", "a3"]
    # A retried append of a forgotten turn does not bring it back.
    retried = await clients.threads.AppendTurn(
        pb.AppendTurnRequest(scope=scope, turn=_turn("a1", "secret", f"My doctor {secret}.", t0))
    )
    assert retried.duplicate

    opened = await _context(clients, scope, "open", later + SECOND_US, [entity_node_id(secret)])
    assert _says(opened, secret) == [] and _says(opened, kept) == [kept]
    gone = await _context(clients, scope, "secret", later + SECOND_US, [])
    assert list(gone.working_memory.turns) == [] and gone.working_memory.rolling_summary == ""
    found = await _until_index_empty_of(clients, scope, later, secret)
    assert not {"a1", "a2", "a3", "secret"} & {c.doc_id for c in [*found.turns, *found.digests]}
    await _nowhere_stored(backend, scope, secret)
    # ForgetThread reaches the same copies (and is idempotent with ForgetSession).
    thread = await clients.threads.ForgetThread(
        pb.ForgetThreadRequest(scope=scope, thread_id="open", now=timestamp_of(later))
    )
    assert thread.forgotten
    await _until_index_empty_of(clients, scope, later, kept)
    await _nowhere_stored(backend, scope, kept)


async def test_forget_user_removes_everything_of_the_user_and_nothing_of_others(
    backend: Backend, clients: Clients
) -> None:
    scope, other = new_scope(), new_scope()
    secret, shared = _word(), _word()
    t0 = _now_us()
    for who in (scope, other):
        await _append(
            clients,
            who,
            _turn("u1", "s1", f"My password hint is {secret if who is scope else shared}.", t0),
            _turn("u2", "s1", f"I promise to visit {shared} soon.", t0 + SECOND_US),
            _turn("u3", "s2", f"We talked about {shared} again.", t0 + 2 * HOUR_US),
        )
    # An atom the AtomExtractor pushed for the user: the ranker forgets it with the user.
    atom = memory_pb2.Atom(
        atom_id="atom-1", text=f"User's hint is {secret}.", status=memory_pb2.ATOM_STATUS_ACTIVE
    )
    await clients.ranker.Upsert(
        ranker_pb.UpsertRequest(scope=scope, documents=[ranker_pb.Document(atom=atom)])
    )
    later = t0 + 3 * HOUR_US

    files_before = _table_files(backend.postgres_url) if backend.postgres_url else {}
    forgotten_at = time.time()
    forgotten = await clients.threads.ForgetUser(
        pb.ForgetUserRequest(scope=scope, now=timestamp_of(later))
    )
    assert forgotten.forgotten and forgotten.removed_turn_count == 3
    repeat = await clients.threads.ForgetUser(
        pb.ForgetUserRequest(scope=scope, now=timestamp_of(later))
    )
    assert not repeat.forgotten and repeat.removed_turn_count == 0

    for session_id in ("s1", "s2"):
        context = await _context(clients, scope, session_id, later, [entity_node_id(shared)])
        assert list(context.working_memory.turns) == []
        assert _says(context, secret, shared) == []
    deadline = time.monotonic() + 20
    while (
        await clients.ranker.DescribeIndex(ranker_pb.DescribeIndexRequest(scope=scope))
    ).document_count:
        assert time.monotonic() < deadline, "the ranker kept documents of a forgotten user"
        await asyncio.sleep(0.2)
    assert (
        _says(await _retrieve(clients, scope, f"{secret} {shared} hint", later), secret, shared)
        == []
    )
    await _nowhere_stored(backend, scope, secret)
    if backend.postgres_url is not None:
        _vacuumed_since(backend.postgres_url, forgotten_at, files_before)
    # The other user keeps everything.
    kept = await _context(clients, other, "s2", later, [])
    assert [t.turn_id for t in kept.working_memory.turns] == ["u3"]
    await _until_indexed(clients, other, later, shared)


async def test_effects_still_queued_for_a_ranker_that_is_down_lose_the_forgotten_words(
    backend: Backend, clients: Clients
) -> None:
    scope = new_scope()
    city = _word()
    t0 = _now_us()
    backend.mesh.pause("retrieval_ranker")
    try:
        # The index effects of these turns stay queued in the ThreadStore's outbox.
        await _append(
            clients,
            scope,
            _turn("p1", "s1", f"My sister lives in {city}. I like tea.", t0),
            _turn("p2", "s1", "We play chess on Sundays.", t0 + SECOND_US),
        )
        assert city in await _stored(backend, scope, city)
        redacted = await clients.threads.RedactTurns(
            pb.RedactTurnsRequest(
                scope=scope, turn_ids=["p1"], forget_terms=[city], now=timestamp_of(t0)
            )
        )
        assert list(redacted.redacted_turn_ids) == ["p1"]
        # The caller hears that the index may still find the words until this is 0.
        assert redacted.pending_index_effects > 0
        # Nothing waiting for the ranker still carries the words.
        assert await _stored(backend, scope, city) == []
    finally:
        backend.mesh.resume("retrieval_ranker")
    # A delivery already sent to the frozen ranker before the redaction (its bytes in the
    # socket) is applied when it wakes; the redaction's newer version then replaces it. So
    # the index is judged once the queued effects are delivered, not at its first answer.
    deadline = time.monotonic() + 20
    while True:
        found = await _retrieve(clients, scope, "tea chess", t0 + SECOND_US)
        texts = {c.doc_id: c.document.turn.text for c in found.turns}
        if {"p1", "p2"} <= set(texts) and texts["p1"] == "I like tea.":
            break
        assert time.monotonic() < deadline, f"the redacted turn was not indexed: {texts}"
        await asyncio.sleep(0.2)
    assert city not in str(found)
    await _nowhere_stored(backend, scope, city)


def _queued_upserts(
    backend: Backend, scope: scope_pb2.UserScope, kind: str = "index_upsert"
) -> list[bytes]:
    """The payloads of the index effects of the kind (any kind for "") the ThreadStore's
    outbox holds for the user."""
    query = (
        "SELECT payload FROM outbox_effects WHERE tenant_id = {0} AND user_id = {0} "
        "AND kind LIKE {0} ORDER BY seq"
    )
    params = (scope.tenant_id, scope.user_id, kind or "%")
    if backend.postgres_url is None:
        import sqlite3

        with sqlite3.connect(backend.data_dir / "thread_store.sqlite3") as connection:
            rows = connection.execute(query.format("?"), params)
            return [bytes(row[0]) for row in rows.fetchall()]
    with psycopg.connect(backend.postgres_url, autocommit=True) as connection:
        rows = connection.execute(
            query.format("%s").replace("outbox_effects", "thread_store.outbox_effects"), params
        )
        return [bytes(row[0]) for row in rows.fetchall()]


async def test_a_late_delivery_of_an_upsert_queued_before_a_redaction_does_not_bring_the_words_back(
    backend: Backend, clients: Clients
) -> None:
    scope = new_scope()
    city = _word()
    t0 = _now_us()
    backend.mesh.pause("retrieval_ranker")
    try:
        await _append(
            clients, scope, _turn("p1", "s1", f"My sister lives in {city}. I like tea.", t0)
        )
        stale = _queued_upserts(backend, scope)
        assert stale and any(city.encode() in payload for payload in stale)
        await clients.threads.RedactTurns(
            pb.RedactTurnsRequest(
                scope=scope, turn_ids=["p1"], forget_terms=[city], now=timestamp_of(t0)
            )
        )
    finally:
        backend.mesh.resume("retrieval_ranker")
    deadline = time.monotonic() + 20
    while True:
        found = await _retrieve(clients, scope, "tea", t0 + SECOND_US)
        if [c.document.turn.text for c in found.turns] == ["I like tea."]:
            break
        assert time.monotonic() < deadline, f"the redaction did not reach the index: {found}"
        await asyncio.sleep(0.2)
    # The upsert a drainer or a timed-out call still carried is applied after the redaction.
    for payload in stale:
        late = await clients.ranker.Upsert(ranker_pb.UpsertRequest.FromString(payload))
        assert late.upserted_count == 0
    found = await _retrieve(clients, scope, "tea sister", t0 + SECOND_US)
    assert [c.document.turn.text for c in found.turns] == ["I like tea."]
    assert city not in str(found)
    await _nowhere_stored(backend, scope, city)


async def test_a_late_upsert_after_the_user_is_forgotten_adds_nothing(
    backend: Backend, clients: Clients
) -> None:
    scope = new_scope()
    city = _word()
    t0 = _now_us()
    backend.mesh.pause("retrieval_ranker")
    try:
        await _append(clients, scope, _turn("p1", "s1", f"My aunt lives in {city}.", t0))
        stale = _queued_upserts(backend, scope)
        assert stale
        await clients.threads.ForgetUser(pb.ForgetUserRequest(scope=scope, now=timestamp_of(t0)))
    finally:
        backend.mesh.resume("retrieval_ranker")
    deadline = time.monotonic() + 20
    # The forgetting is delivered once nothing is queued for the user any more.
    while _queued_upserts(backend, scope, kind=""):
        assert time.monotonic() < deadline, "the forgetting did not reach the index"
        await asyncio.sleep(0.2)
    for payload in stale:
        late = await clients.ranker.Upsert(ranker_pb.UpsertRequest.FromString(payload))
        assert late.upserted_count == 0
    found = await _retrieve(clients, scope, "aunt", t0 + SECOND_US)
    assert not found.turns and city not in str(found)


async def test_a_redaction_also_takes_the_words_out_of_the_assistants_later_replies(
    backend: Backend, clients: Clients
) -> None:
    scope = new_scope()
    name, city = _word(), _word()
    t0 = _now_us()
    await _append(
        clients,
        scope,
        _turn("e0", "s1", f"Earlier I drove past {city}. Nice roads.", t0, user=False),
        _turn("e1", "s1", f"My niece {name} lives in {city}.", t0 + SECOND_US),
        _turn(
            "e2",
            "s1",
            f"Got it, {name} lives in {city}. Anything else?",
            t0 + 2 * SECOND_US,
            user=False,
        ),
        _turn("e3", "s1", "Please delete that.", t0 + 3 * SECOND_US),
    )
    redacted = await clients.threads.RedactTurns(
        pb.RedactTurnsRequest(
            scope=scope, turn_ids=["e1"], forget_terms=[name, city], now=timestamp_of(t0)
        )
    )
    # The reply after the named turn loses the sentence that repeated the words; a reply
    # before it, and every turn of another session, are not the forget's to change.
    assert list(redacted.redacted_turn_ids) == ["e1", "e2"]
    assert list(redacted.emptied_turn_ids) == ["e1"]
    context = await clients.threads.GetTurnContext(
        pb.GetTurnContextRequest(scope=scope, session_id="s1", now=timestamp_of(t0 + 4 * SECOND_US))
    )
    texts = [t.text for t in context.working_memory.turns]
    assert texts == [
        f"Earlier I drove past {city}. Nice roads.",
        "",
        "Anything else?",
        "Please delete that.",
    ]
    assert name not in str(context)
    await _until_index_empty_of(clients, scope, t0, name)
