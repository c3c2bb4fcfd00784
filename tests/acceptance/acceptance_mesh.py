"""Shared helpers of the per-turn acceptance tests: a multi-process mesh behind the gateway,
a user that talks through it, and direct seeding of engines over gRPC with the internal token.

Seeding: the ContextComposer reads pull atoms only from the RetrievalRanker's index, whose
atom documents carry every §2.11.9 signal. Where a test needs exact signals that the
deterministic extractor cannot produce from a sentence (a pinned or inferred atom, a given
last use or use count, forty look-alike atoms), it upserts atom documents into that index
as the capsule would; everything else goes through Gateway.Ingest.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import grpc
import pytest
from google.protobuf import text_format

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.gateway.v1 import gateway_service_pb2 as gateway_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
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
    "context_composer",
    "gateway",
]
TENANT, TENANT_KEY = "acc", "acc-key"
OTHER_TENANT, OTHER_TENANT_KEY = "acc-other", "acc-other-key"
INTERNAL_TOKEN = MeshSettings().internal_token
SECOND_US = 1_000_000
MINUTE_US = 60 * SECOND_US
DAY_US = 86_400 * SECOND_US
NOW_US = 1_767_225_600 * SECOND_US
# These tests prove behaviour, not latency: a generous budget keeps a loaded 2-core
# machine from turning a slow turn into an (expected) empty BUDGET_EXCEEDED bundle.
BRIEF_BUDGET_MS = 3000

# Seed 001 §2.11.9 and DESIGN.md hard caps.
BUNDLE_BYTES_CAP = 32 * 1024
MAX_ATOMS = 20
MAX_EXCERPTS = 2
MAX_WORKING_TURNS = 6
MAX_RECALL_ITEMS = 10
RECALL_BYTES_CAP = 1024
REASK_REASONS = {"CONFLICT", "STALE", "LOW_CONFIDENCE", "USER_REQUEST", "DEVICE_RESTORE"}


def running_mesh(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Mesh]:
    """The per-turn engines as real processes on loopback, one data directory per module."""
    env = {
        "MEMMESH_DATA_DIR": str(tmp_path_factory.mktemp(name)),
        "MEMMESH_STORAGE_URL": "sqlite",
        "MEMMESH_GATEWAY_TENANT_KEYS": f'{{"{TENANT}": "{TENANT_KEY}", "{OTHER_TENANT}": "{OTHER_TENANT_KEY}"}}',
        "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": str(BRIEF_BUDGET_MS),
        "MEMMESH_GATEWAY_RETRY_INITIAL_S": "0.1",
        "MEMMESH_GATEWAY_RETRY_MAX_S": "0.5",
        "MEMMESH_LOG_LEVEL": "WARNING",
    }
    with Mesh(list(ENGINES), env=env) as mesh:
        yield mesh


def new_user_id() -> str:
    """A random user per test, so tests never share memory."""
    return f"u-{uuid.uuid4().hex[:12]}"


def atom_id_of(user_id: str, name: str) -> str:
    """A deterministic atom id for a seeded atom."""
    return "atm_" + hashlib.sha256(f"{user_id}:{name}".encode()).hexdigest()[:32]


def seeded_atom(
    atom_id: str,
    key: str,
    text: str,
    *,
    created_us: int = NOW_US - DAY_US,
    confidence_bp: int = 9000,
    provenance: int = memory_pb2.PROVENANCE_USER_STATED,
    exposure: int = memory_pb2.EXPOSURE_SAFE_TO_SPEAK,
    atom_type: int = memory_pb2.ATOM_TYPE_USER_FACT,
    category: int = memory_pb2.ATOM_CATEGORY_PREFERENCE,
    pinned: bool = False,
    pull_only: bool = False,
    last_use_us: int = 0,
    use_count: int = 0,
    critical_tokens: tuple[str, ...] = (),
    topics: tuple[str, ...] = (),
    status: int = memory_pb2.ATOM_STATUS_ACTIVE,
) -> memory_pb2.Atom:
    """An atom as the capsule would index it, with every ranking signal explicit."""
    atom = memory_pb2.Atom(
        atom_id=atom_id,
        key=key,
        text=text,
        category=category,
        type=atom_type,
        provenance=provenance,
        confidence_bp=confidence_bp,
        exposure=exposure,
        pinned=pinned,
        pull_only=pull_only,
        critical_tokens=list(critical_tokens),
        create_time=timestamp_of(created_us),
        use_count=use_count,
        version=1,
        evidence_turn_ids=[f"seed-{atom_id[-8:]}"],
        status=status,
        topics=list(topics),
    )
    if last_use_us:
        atom.last_use_time.CopyFrom(timestamp_of(last_use_us))
    return atom


def response_text(message: object) -> str:
    """Every field of a response as text (ids, texts, hints), for leak checks."""
    return text_format.MessageToString(message, as_utf8=True)  # type: ignore[arg-type]


@dataclass
class User:
    """One user of tenant `acc`, talking through the gateway; engine stubs for seeding."""

    mesh: Mesh
    gateway: GatewayClient
    user_id: str = field(default_factory=new_user_id)
    turns: int = 0

    @property
    def scope(self) -> scope_pb2.UserScope:
        return scope_pb2.UserScope(tenant_id=TENANT, user_id=self.user_id)

    async def say(
        self, text: str, time_us: int, session_id: str = "s1", role: str = "user"
    ) -> gateway_pb.IngestResponse:
        """Ingest one turn; ids are numbered per user."""
        self.turns += 1
        reply = await self.gateway.ingest(
            self.user_id, session_id, f"t{self.turns}", role, text, time_us
        )
        assert reply.ok
        return reply

    async def brief(
        self, query: str, now_us: int, session_id: str = "s1", **options: object
    ) -> gateway_pb.BriefResponse:
        """A Brief that must not have failed closed (Tier-2 flags are the caller's to check)."""
        response = await self.gateway.brief(self.user_id, session_id, now_us, query, **options)  # type: ignore[arg-type]
        assert response.reason_code in ("", "TIER2_DEGRADED"), response.reason_code
        return response

    async def seed_atoms(self, atoms: list[memory_pb2.Atom]) -> None:
        """Upsert atom documents into the user's index (see the module docstring)."""
        documents = [ranker_pb.Document(atom=a) for a in atoms]
        async with self._channel("retrieval_ranker") as channel:
            await ranker_grpc.RetrievalRankerServiceStub(channel).Upsert(
                ranker_pb.UpsertRequest(scope=self.scope, documents=documents)
            )

    async def retrieve(
        self, query: str, now_us: int, max_atoms: int = MAX_ATOMS
    ) -> ranker_pb.RetrieveResponse:
        """The ranker's own candidates for a query."""
        async with self._channel("retrieval_ranker") as channel:
            return await ranker_grpc.RetrievalRankerServiceStub(channel).Retrieve(
                ranker_pb.RetrieveRequest(
                    scope=self.scope,
                    query=query,
                    now=timestamp_of(now_us),
                    caps=ranker_pb.RetrieveCaps(max_atoms=max_atoms),
                )
            )

    async def atoms(self) -> list[memory_pb2.Atom]:
        """The user's capsule."""
        async with self._channel("atom_extractor") as channel:
            reply = await extractor_grpc.AtomExtractorServiceStub(channel).ListAtoms(
                extractor_pb.ListAtomsRequest(scope=self.scope, page_size=1000)
            )
        return list(reply.atoms)

    async def mark(
        self, target: str, now_us: int, **marks: object
    ) -> extractor_pb.MarkAtomsResponse:
        """Mark the capsule's atoms on a key or topic (exposure, pinned, pull-only)."""
        async with self._channel("atom_extractor") as channel:
            return await extractor_grpc.AtomExtractorServiceStub(channel).MarkAtoms(
                extractor_pb.MarkAtomsRequest(
                    scope=self.scope, target=target, now=timestamp_of(now_us), **marks
                )  # type: ignore[arg-type]
            )

    async def set_profile(self, now_us: int, **changes: object) -> None:
        """Write Current State facts (operational truth), one reason-coded change each."""
        async with self._channel("current_state") as channel:
            stub = state_grpc.CurrentStateServiceStub(channel)
            for name, value in sorted(changes.items()):
                await stub.Apply(
                    state_pb.ApplyRequest(
                        scope=self.scope,
                        change=state_pb.StateChange(**{name: value}),  # type: ignore[arg-type]
                        any_version=True,
                        reason_code="USER_REQUEST",
                        idempotency_key=f"{self.user_id}:{name}",
                        now=timestamp_of(now_us),
                    )
                )

    def _channel(self, engine: str) -> grpc.aio.Channel:
        return engine_channel(self.mesh.addrs[engine], INTERNAL_TOKEN, 5.0)


def check_caps(response: gateway_pb.BriefResponse) -> None:
    """Seed 001 §2.11.9 hard caps of one bundle and counters that agree with it."""
    bundle = response.bundle
    assert len(bundle.atoms) <= MAX_ATOMS
    assert len(bundle.excerpts) <= MAX_EXCERPTS
    assert all(len(turn.text) <= 280 for turn in bundle.excerpts)
    assert len(bundle.working_memory) <= MAX_WORKING_TURNS
    assert len(bundle.SerializeToString()) <= BUNDLE_BYTES_CAP
    assert response.counters.context_bundle_bytes <= BUNDLE_BYTES_CAP
    assert response.counters.atoms_selected_count == len(bundle.atoms)
    assert response.counters.excerpts_selected_count == len(bundle.excerpts)
    assert response.counters.clarification_due_to_memory_count == int(
        bundle.HasField("clarification")
    )
