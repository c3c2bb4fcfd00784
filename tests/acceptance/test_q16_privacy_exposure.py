"""Seed 001 §2.17 Q16 (privacy + exposure control) over gRPC against real engine processes."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as pb_grpc
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.ledger_keys import SubjectKeys
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as index_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as index_grpc
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
FACTS = [
    "I love jazz.",
    "I prefer tea over coffee.",
    "I am a vegetarian.",
    "I work as a nurse.",
    "I live in Boston.",
    "My favorite color is blue.",
    "I play the guitar.",
    "I hate cilantro.",
    "I am allergic to peanuts.",
    "My boss is named Greg.",
    "I have a dog named Rex.",
    "I am left-handed.",
    "I have diabetes.",
]


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    data_dir: Path = tmp_path_factory.mktemp("q16")
    running = Mesh(
        ENGINES, env={"MEMMESH_DATA_DIR": str(data_dir), "MEMMESH_STORAGE_URL": "sqlite"}
    )
    running.start()
    yield running
    running.stop()


@dataclass
class Client:
    capsule: pb_grpc.AtomExtractorServiceStub
    guard: guard_grpc.ExposureGuardServiceStub
    index: index_grpc.RetrievalRankerServiceStub
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

    async def atoms(self) -> list[memory_pb2.Atom]:
        return list((await self.capsule.ListAtoms(pb.ListAtomsRequest(scope=self.scope))).atoms)

    async def filtered(self, channel: int, atoms: list[memory_pb2.Atom]) -> guard_pb.FilterResponse:
        items = [
            guard_pb.FilterItem(
                item_id=a.atom_id,
                atom_id=a.atom_id,
                key=a.key,
                topics=a.topics,
                exposure=a.exposure,
                pull_only=a.pull_only,
                text=a.text,
            )
            for a in atoms
        ]
        return await self.guard.Filter(
            guard_pb.FilterRequest(scope=self.scope, channel=channel, items=items)
        )

    async def retrieved(self, query: str) -> list[str]:
        reply = await self.index.Retrieve(
            index_pb.RetrieveRequest(
                scope=self.scope,
                query=query,
                now=timestamp_of(NOW + 1000),
                caps=index_pb.RetrieveCaps(max_atoms=20),
            )
        )
        return [c.doc_id for c in reply.atoms]


@pytest.fixture
async def client(mesh: Mesh) -> AsyncIterator[Client]:
    token = MeshSettings().internal_token
    names = ("atom_extractor", "exposure_guard", "retrieval_ranker", "ledger")
    channels = [engine_channel(mesh.addrs[name], token, 5.0) for name in names]
    scope = scope_pb2.UserScope(tenant_id="q16", user_id=f"u-{uuid.uuid4().hex[:12]}")
    yield Client(
        pb_grpc.AtomExtractorServiceStub(channels[0]),
        guard_grpc.ExposureGuardServiceStub(channels[1]),
        index_grpc.RetrievalRankerServiceStub(channels[2]),
        ledger_grpc.LedgerServiceStub(channels[3]),
        scope,
    )
    for channel in channels:
        await channel.close()


def by_text(atoms: list[memory_pb2.Atom]) -> dict[str, memory_pb2.Atom]:
    return {a.text: a for a in atoms}


async def test_at_q16_mem_exposure_filter(client: Client) -> None:
    for text in ("I prefer tea over coffee.", "I have diabetes.", "I live in Boston."):
        await client.say(text)
    boston = by_text(await client.atoms())["User lives in Boston."]
    marked = await client.capsule.MarkAtoms(
        pb.MarkAtomsRequest(
            scope=client.scope,
            target="identity.residence",
            set_exposure=memory_pb2.EXPOSURE_INTERNAL_ONLY,
            now=timestamp_of(NOW),
        )
    )
    assert [c.atom.atom_id for c in marked.changes] == [boston.atom_id]
    atoms = by_text(await client.atoms())
    # The extractor's defaults: health is never SAFE_TO_SPEAK.
    assert atoms["User prefers tea over coffee."].exposure == memory_pb2.EXPOSURE_SAFE_TO_SPEAK
    assert atoms["User has diabetes."].exposure == memory_pb2.EXPOSURE_SAFE_TO_TEXT
    assert atoms["User lives in Boston."].exposure == memory_pb2.EXPOSURE_INTERNAL_ONLY
    voice = await client.filtered(memory_pb2.CHANNEL_VOICE, list(atoms.values()))
    text = await client.filtered(memory_pb2.CHANNEL_TEXT, list(atoms.values()))
    tea, diabetes = atoms["User prefers tea over coffee."], atoms["User has diabetes."]
    # Seed 001 §2.11.11: SAFE_TO_TEXT reaches a voice bundle to be used, never said;
    # INTERNAL_ONLY reaches no bundle at all.
    assert set(voice.allowed_item_ids) == {tea.atom_id, diabetes.atom_id}
    assert list(voice.do_not_say_item_ids) == [diabetes.atom_id]
    assert set(text.allowed_item_ids) == {tea.atom_id, diabetes.atom_id}
    assert list(text.do_not_say_item_ids) == []
    assert boston.atom_id not in set(voice.allowed_item_ids) | set(text.allowed_item_ids)
    assert {h.rule: h.hit_count for h in voice.hits} == {"INTERNAL_ONLY": 1}


async def test_at_q16_mem_do_not_mention(client: Client) -> None:
    await client.say("I'm going to visit my sister Sarah in Chicago next week.")
    await client.say("I prefer tea over coffee.")
    stop = await client.say("Stop mentioning my sister.")
    assert stop.command == pb.COMMAND_DO_NOT_MENTION and stop.pending_effects == 0
    rules = (await client.guard.ListRules(guard_pb.ListRulesRequest(scope=client.scope))).rules
    assert any(r.kind == guard_pb.RULE_KIND_DO_NOT_MENTION and r.target == "sister" for r in rules)
    atoms = by_text(await client.atoms())
    sister = atoms["User has a sister named Sarah."]
    for channel in (memory_pb2.CHANNEL_VOICE, memory_pb2.CHANNEL_TEXT):
        reply = await client.filtered(channel, list(atoms.values()))
        assert sister.atom_id not in reply.allowed_item_ids
        assert atoms["User prefers tea over coffee."].atom_id in reply.allowed_item_ids
        assert reply.do_not_mention_hits >= 1
    summary = await client.guard.RecallSummary(
        guard_pb.RecallSummaryRequest(
            scope=client.scope, channel=memory_pb2.CHANNEL_TEXT, atoms=list(atoms.values())
        )
    )
    assert not any("Sarah" in item or "sister" in item for item in summary.items)
    events = [
        reply.event async for reply in client.ledger.Read(ledger_pb.ReadRequest(scope=client.scope))
    ]
    applied = [e for e in events if e.event_type == "COMMAND_APPLIED"]
    assert [next(a.string_value for a in e.attributes if a.name == "command") for e in applied] == [
        "DO_NOT_MENTION"
    ]


async def test_at_q16_mem_forget_commands(client: Client) -> None:
    await client.say("I'm going to visit my sister Sarah in Chicago next week.")
    [sister] = await client.atoms()
    assert sister.atom_id in await client.retrieved("my sister Sarah")
    forgot = await client.say("Forget that.")
    assert [(pb.ChangeKind.Name(c.kind), c.atom.atom_id) for c in forgot.changes] == [
        ("CHANGE_KIND_FORGOTTEN", sister.atom_id)
    ]
    assert forgot.pending_effects == 0
    assert await client.atoms() == []
    assert sister.atom_id not in await client.retrieved("my sister Sarah")
    events = [
        reply.event async for reply in client.ledger.Read(ledger_pb.ReadRequest(scope=client.scope))
    ]
    forgotten = [e for e in events if e.event_type == "ATOM_FORGOTTEN"]
    assert len(forgotten) == 1 and forgotten[0].reason_code == "USER_FORGET"
    # The ledger names the atom by a keyed hash (HMAC under the user's subject key).
    ring = await SubjectKeys(client.ledger).fetch(client.scope.tenant_id, client.scope.user_id)
    assert any(
        a.name == "atom_id" and a.string_value == ring.linkable(sister.atom_id)
        for a in forgotten[0].attributes
    )
    assert not any("Sarah" in str(e) for e in events)
    # "Don't remember this" about a topic: the atom goes and later statements on it are not stored.
    await client.say("I have a dog named Rex.")
    blocked = await client.capsule.RunCommand(
        pb.RunCommandRequest(
            scope=client.scope,
            command=pb.COMMAND_DO_NOT_STORE,
            target="my dog",
            now=timestamp_of(NOW + 50),
        )
    )
    assert [pb.ChangeKind.Name(c.kind) for c in blocked.changes] == ["CHANGE_KIND_FORGOTTEN"]
    later = await client.say("My dog is named Max.")
    assert [(pb.ChangeKind.Name(c.kind), c.reason_code) for c in later.changes] == [
        ("CHANGE_KIND_DROPPED", "DO_NOT_STORE_RULE")
    ]
    assert await client.atoms() == []


async def test_at_q16_mem_safe_recall_summary(client: Client) -> None:
    for text in FACTS:
        await client.say(text)
    asked = await client.say("What do you remember about me?")
    assert asked.command == pb.COMMAND_RECALL_SUMMARY and not asked.changes
    atoms = await client.atoms()
    assert len(atoms) == len(FACTS)
    greg = by_text(atoms)["User's boss is Greg."]
    await client.capsule.MarkAtoms(
        pb.MarkAtomsRequest(
            scope=client.scope,
            target="Greg",
            set_exposure=memory_pb2.EXPOSURE_INTERNAL_ONLY,
            now=timestamp_of(NOW),
        )
    )
    atoms = await client.atoms()
    for channel in (memory_pb2.CHANNEL_VOICE, memory_pb2.CHANNEL_TEXT):
        summary = await client.guard.RecallSummary(
            guard_pb.RecallSummaryRequest(scope=client.scope, channel=channel, atoms=atoms)
        )
        assert 0 < len(summary.items) <= 10
        assert sum(len(item.encode()) for item in summary.items) <= 1024
        assert greg.atom_id not in summary.atom_ids and "Greg" not in " ".join(summary.items)
        exposure = {a.atom_id: a.exposure for a in atoms}
        allowed = {memory_pb2.EXPOSURE_SAFE_TO_SPEAK} | (
            {memory_pb2.EXPOSURE_SAFE_TO_TEXT} if channel == memory_pb2.CHANNEL_TEXT else set()
        )
        assert {exposure[atom_id] for atom_id in summary.atom_ids} <= allowed
