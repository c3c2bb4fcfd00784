"""The ledger keeps the fact of a change, never its content (issue "forget means forget",
item 2), against real engine processes: after facts with names, a FORGET, a DO_NOT_STORE
and a DO_NOT_MENTION, no row of the Ledger (as Read serves it, and every byte of its
database file and WAL) holds a name or a command's target, in clear or as a plain SHA-256;
the keyed hashes match only with the user's subject key; after the key is shredded it is
gone, nothing stored can be recomputed from the words, and Verify is green."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as pb_grpc
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.ledger_keys import SubjectKeyring, SubjectKeys, is_sealed, shred_subject_key
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.settings import MeshSettings
from memmesh.runtime.supervisor import Mesh
from memmesh.runtime.timeconv import timestamp_of

ENGINES = [
    "ledger",
    "current_state",
    "exposure_guard",
    "retrieval_ranker",
    "thread_store",
    "atom_extractor",
]
NOW = 1_767_225_600_000_000
DISPLAY_NAME = "Amara Okafor"
# Words the user said that the ledger must never hold: names, places, command targets.
WORDS = ["sarah", "chicago", "greg", "rex", "amara", "okafor", "sister", "boss", "dog"]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("privacy-ledger")


@pytest.fixture(scope="module")
def mesh(data_dir: Path) -> Iterator[Mesh]:
    env = {
        "MEMMESH_DATA_DIR": str(data_dir),
        "MEMMESH_STORAGE_URL": "sqlite",
        "MEMMESH_LOG_LEVEL": "WARNING",
    }
    with Mesh(ENGINES, env=env) as running:
        yield running


@dataclass
class Client:
    capsule: pb_grpc.AtomExtractorServiceStub
    state: state_grpc.CurrentStateServiceStub
    ledger: ledger_grpc.LedgerServiceStub
    scope: scope_pb2.UserScope
    turns: int = 0

    async def say(self, text: str) -> pb.ProcessResponse:
        self.turns += 1
        now = NOW + self.turns
        turn = memory_pb2.Turn(
            turn_id=f"turn-{self.turns}",
            session_id="session-1",
            role=memory_pb2.ROLE_USER,
            text=text,
            time=timestamp_of(now),
        )
        return await self.capsule.Process(
            pb.ProcessRequest(scope=self.scope, turn=turn, now=timestamp_of(now))
        )

    async def events(self) -> list[ledger_pb.LedgerEvent]:
        return [r.event async for r in self.ledger.Read(ledger_pb.ReadRequest(scope=self.scope))]

    async def verify(self) -> ledger_pb.VerifyResponse:
        return await self.ledger.Verify(ledger_pb.VerifyRequest(scope=self.scope))


@pytest.fixture
async def client(mesh: Mesh) -> AsyncIterator[Client]:
    token = MeshSettings().internal_token
    names = ("atom_extractor", "current_state", "ledger")
    channels = [engine_channel(mesh.addrs[name], token, 10.0) for name in names]
    scope = scope_pb2.UserScope(tenant_id="privacy", user_id=f"u-{uuid.uuid4().hex[:12]}")
    yield Client(
        pb_grpc.AtomExtractorServiceStub(channels[0]),
        state_grpc.CurrentStateServiceStub(channels[1]),
        ledger_grpc.LedgerServiceStub(channels[2]),
        scope,
    )
    for channel in channels:
        await channel.close()


def raw_forms(words: list[str]) -> list[bytes]:
    """The spellings to look for in the raw database bytes, as said and lower-cased. Words
    under four letters are left to the served-rows scan and the atom-key scan: a three-byte
    pattern turns up by chance in the random hash blobs of a database file."""
    return [f.encode() for w in words if len(w) >= 4 for f in {w, w.lower(), w.capitalize()}]


def ledger_bytes(data_dir: Path) -> bytes:
    """Every byte of the Ledger's database: the file (free pages included) and its WAL."""
    return b"".join(p.read_bytes() for p in sorted(data_dir.glob("ledger.sqlite3*")))


def stored_strings(events: list[ledger_pb.LedgerEvent]) -> set[str]:
    return {e.idempotency_key for e in events} | {
        a.string_value for e in events for a in e.attributes if a.string_value
    }


def served_text(events: list[ledger_pb.LedgerEvent]) -> str:
    """Every readable field of the served rows, lower-cased: the chain hashes (raw bytes) and
    the sealed values (base64 of ciphertext, checked by opening them) are left out, since a
    three-letter word turns up by chance in random bytes."""
    parts = []
    for event in events:
        parts += [event.idempotency_key, event.event_type, event.reason_code]
        for attribute in event.attributes:
            parts.append(attribute.name)
            if not is_sealed(attribute.string_value):
                parts.append(attribute.string_value)
    return "\n".join(parts).lower()


def plain_digests(texts: list[str]) -> list[bytes]:
    """Unkeyed SHA-256 forms a guesser could recompute from a word (hex, full and cut)."""
    forms = []
    for text in texts:
        digest = hashlib.sha256(text.encode()).hexdigest()
        forms += [digest.encode(), digest[:32].encode()]
    return forms


async def tell_and_command(client: Client) -> list[memory_pb2.Atom]:
    """Facts with names, then FORGET, DO_NOT_STORE and DO_NOT_MENTION; the atoms as they
    were before the commands (their keys are what the ledger must not spell)."""
    await client.state.Apply(
        state_pb.ApplyRequest(
            scope=client.scope,
            change=state_pb.StateChange(set_display_name=DISPLAY_NAME),
            any_version=True,
            reason_code="USER_REQUEST",
            idempotency_key="display-name-1",
            now=timestamp_of(NOW),
        )
    )
    await client.say("I'm going to visit my sister Sarah in Chicago next week.")
    await client.say("I have a dog named Rex.")
    await client.say("My boss is named Greg.")
    atoms = list((await client.capsule.ListAtoms(pb.ListAtomsRequest(scope=client.scope))).atoms)
    assert len(atoms) == 3
    forgot = await client.say("Forget that.")
    assert forgot.command == pb.COMMAND_FORGET
    stop = await client.say("Stop mentioning my sister.")
    assert stop.command == pb.COMMAND_DO_NOT_MENTION
    blocked = await client.capsule.RunCommand(
        pb.RunCommandRequest(
            scope=client.scope,
            command=pb.COMMAND_DO_NOT_STORE,
            target="my dog",
            now=timestamp_of(NOW + 50),
        )
    )
    assert blocked.changes
    return atoms


def secrets_of(atoms: list[memory_pb2.Atom]) -> list[str]:
    """Everything linkable to the user's words: the words, atom keys and ids, command targets."""
    texts = [*WORDS, DISPLAY_NAME, "my dog", "my sister", "sister", "dog"]
    return texts + [a.key for a in atoms] + [a.atom_id for a in atoms]


async def test_ledger_rows_hold_no_names_or_targets_only_keyed_hashes(
    client: Client, data_dir: Path
) -> None:
    atoms = await tell_and_command(client)
    events = await client.events()
    types = {e.event_type for e in events}
    assert {"ATOM_CREATED", "ATOM_FORGOTTEN", "COMMAND_APPLIED", "STATE_CHANGED"} <= types
    assert "EXPOSURE_RULE_SET" in types
    served = b"".join(e.SerializeToString() for e in events).lower()
    readable = served_text(events)
    raw = ledger_bytes(data_dir)
    for word in WORDS:
        assert word not in readable, word
    for form in raw_forms([*WORDS, DISPLAY_NAME]):
        assert form not in raw, form
    for atom in atoms:
        assert atom.key.lower().encode() not in raw and atom.atom_id.encode() not in raw
    for digest in plain_digests(secrets_of(atoms)):
        assert digest not in served and digest not in raw

    # The hashes link with the user's key, and only with it.
    ring = await SubjectKeys(client.ledger).fetch(client.scope.tenant_id, client.scope.user_id)
    stored = stored_strings(events)
    assert {ring.linkable(a.key) for a in atoms} <= stored
    assert {ring.linkable(a.atom_id) for a in atoms} <= stored
    assert ring.linkable("sister") in stored  # the DO_NOT_MENTION target
    stranger = SubjectKeyring(client.scope.tenant_id, client.scope.user_id, ring.key_id, bytes(64))
    assert not {stranger.linkable(t) for t in secrets_of(atoms)} & stored
    sealed = [
        a.string_value
        for e in events
        if e.event_type == "STATE_CHANGED"
        for a in e.attributes
        if a.name == "value"
    ]
    assert [ring.open("value", s) for s in sealed] == [DISPLAY_NAME]
    assert (await client.verify()).intact


async def test_shredding_the_key_unlinks_the_ledger_and_verify_stays_green(
    client: Client, data_dir: Path
) -> None:
    atoms = await tell_and_command(client)
    ring = await SubjectKeys(client.ledger).fetch(client.scope.tenant_id, client.scope.user_id)
    secret = (
        await client.ledger.GetSubjectKey(ledger_pb.GetSubjectKeyRequest(scope=client.scope))
    ).secret
    before = await client.events()

    shredded = await shred_subject_key(
        client.ledger, client.scope.tenant_id, client.scope.user_id, NOW + 1_000
    )
    assert shredded.shredded and shredded.key_id == ring.key_id

    # The key is gone: its bytes are nowhere in the Ledger's file or WAL, and asking for the
    # user's key gives a fresh one that recomputes none of the stored hashes.
    assert secret not in ledger_bytes(data_dir)
    fresh = await SubjectKeys(client.ledger).fetch(client.scope.tenant_id, client.scope.user_id)
    assert fresh.key_id != ring.key_id
    after = await client.events()
    assert [e.SerializeToString() for e in after[: len(before)]] == [
        e.SerializeToString() for e in before
    ]
    assert after[-1].event_type == "SUBJECT_KEY_SHREDDED"
    stored = stored_strings(after)
    assert not {fresh.linkable(t) for t in secrets_of(atoms)} & stored
    sealed = [a.string_value for e in after for a in e.attributes if a.name == "value"]
    assert sealed and all(fresh.open("value", s) is None for s in sealed)
    raw = ledger_bytes(data_dir)
    for form in raw_forms([*WORDS, DISPLAY_NAME]):
        assert form not in raw, form
    verified = await client.verify()
    assert verified.intact and verified.event_count == len(after)

    # Later events use the fresh key; the chain goes on intact.
    await client.say("I play the guitar.")
    newest = (await client.events())[-1]
    assert {a.name: a.string_value for a in newest.attributes}["subject_key_id"] == fresh.key_id
    assert (await client.verify()).intact
