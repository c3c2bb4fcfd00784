"""Learning stores (seed 001 §2.4, §2.14) through real engine processes: what a user says
about their words becomes a hint in their next Brief's Hint Bundle (and nobody else's, and
never for an unverified voice); the capsule's bytes on disk hold none of it in clear;
"forget everything" shreds it; a company pack with an identity document is refused naming
the entry; global signals stay unreleased below k; signed packages are verified on the
device, applied once, rolled back, and each apply and rollback is on the ledger."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import string
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import grpc
import pytest
from acceptance_mesh import (
    BRIEF_BUDGET_MS,
    ENGINES,
    INTERNAL_TOKEN,
    MINUTE_US,
    NOW_US,
    TENANT,
    TENANT_KEY,
    User,
)

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import scope_pb2
from memmesh.device.device_db import open_device_db
from memmesh.device.learning_packages import (
    PackageAction,
    PackageApplier,
    PackageRefused,
    SignedPackage,
)
from memmesh.gateway.v1 import gateway_service_pb2 as gateway_pb
from memmesh.gateway.v1 import gateway_service_pb2_grpc as gateway_grpc
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.errors import details_of
from memmesh.runtime.supervisor import Mesh
from memmesh.runtime.timeconv import timestamp_of

K_THRESHOLD = 3
LATER_US = NOW_US + 10 * MINUTE_US
SETTLE_S = 15.0


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("learning_stores")


@pytest.fixture(scope="module")
def mesh(data_dir: Path) -> Iterator[Mesh]:
    env = {
        "MEMMESH_DATA_DIR": str(data_dir),
        "MEMMESH_STORAGE_URL": "sqlite",
        "MEMMESH_GATEWAY_TENANT_KEYS": f'{{"{TENANT}": "{TENANT_KEY}"}}',
        "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": str(BRIEF_BUDGET_MS),
        "MEMMESH_ATOM_EXTRACTOR_LEARNING_K_THRESHOLD": str(K_THRESHOLD),
        "MEMMESH_LOG_LEVEL": "WARNING",
    }
    with Mesh(list(ENGINES), env=env) as running:
        yield running


@pytest.fixture
async def gateway(mesh: Mesh) -> AsyncIterator[GatewayClient]:
    async with GatewayClient(
        mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT, internal_token=INTERNAL_TOKEN
    ) as client:
        yield client


@pytest.fixture
async def extractor(mesh: Mesh) -> AsyncIterator[extractor_grpc.AtomExtractorServiceStub]:
    channel = engine_channel(mesh.addrs["atom_extractor"], INTERNAL_TOKEN, 10.0)
    yield extractor_grpc.AtomExtractorServiceStub(channel)
    await channel.close()


async def eventually(check: Callable[[], Awaitable[bool]], within_s: float = SETTLE_S) -> bool:
    """True once `check` holds (an extraction queued on a loaded machine follows later)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while True:
        if await check():
            return True
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.2)


def pairs_of(hints: object) -> set[tuple[str, str]]:
    return {(p.heard, p.meant) for p in hints.corrections}  # type: ignore[attr-defined]


def made_up_word() -> str:
    """A lower-case word no other test (or run on the shared store) says."""
    return "".join(random.choices(string.ascii_lowercase, k=10))


async def profile(
    extractor: extractor_grpc.AtomExtractorServiceStub,
    scope: scope_pb2.UserScope,
    verified: bool = True,
) -> extractor_pb.GetLearningProfileResponse:
    return await extractor.GetLearningProfile(
        extractor_pb.GetLearningProfileRequest(scope=scope, identity_verified=verified)
    )


def learning_file_bytes(data_dir: Path) -> bytes:
    """Every byte of the learning stores' database: the file and its WAL."""
    return b"".join(
        p.read_bytes() for p in sorted(data_dir.glob("atom_extractor_learning.sqlite3*"))
    )


def stored_rows(data_dir: Path, sql: str, params: tuple[str, ...]) -> list[tuple[object, ...]]:
    db = sqlite3.connect(data_dir / "atom_extractor_learning.sqlite3")
    try:
        return list(db.execute(sql, params).fetchall())
    finally:
        db.close()


async def test_words_said_in_speech_become_hints_of_the_next_brief_for_that_voice_only(
    mesh: Mesh, gateway: GatewayClient, extractor: extractor_grpc.AtomExtractorServiceStub
) -> None:
    user, other = User(mesh, gateway), User(mesh, gateway)
    await user.say("When I say the shed, I mean Brackenfield Workshop.", NOW_US)
    await user.say("Kubrix is pronounced koo-bricks.", NOW_US + 1)
    await user.say("Our supplier is Talverra Timber.", NOW_US + 2)

    async def learned() -> bool:
        return len((await profile(extractor, user.scope)).pairs) >= 2

    assert await eventually(learned)
    brief = await user.brief("what should I order for the shed?", LATER_US)
    assert {("the shed", "Brackenfield Workshop"), ("koo-bricks", "Kubrix")} <= pairs_of(
        brief.hints
    )
    assert {"Brackenfield Workshop", "Kubrix", "Talverra Timber"} <= set(brief.hints.vocabulary)

    # Voice-locked: another user's Brief carries none of it, nor does an unverified one.
    theirs = await other.brief("what should I order for the shed?", LATER_US)
    assert "Brackenfield Workshop" not in str(theirs.hints)
    unverified = await gateway.brief(
        user.user_id, "s1", LATER_US, "the shed?", identity_verified=False
    )
    assert unverified.reason_code == "IDENTITY_UNVERIFIED"
    assert not unverified.hints.corrections and not unverified.hints.vocabulary
    locked = await profile(extractor, user.scope, verified=False)
    assert not locked.served and not locked.pairs
    served = await profile(extractor, user.scope)
    assert served.served and "Talverra Timber" in served.vendors


async def test_capsule_bytes_on_disk_hold_no_plaintext_and_forget_everything_shreds_it(
    mesh: Mesh,
    data_dir: Path,
    gateway: GatewayClient,
    extractor: extractor_grpc.AtomExtractorServiceStub,
) -> None:
    user = User(mesh, gateway)
    await user.say("When I say the annex, I mean Quillmoor Observatory.", NOW_US)

    async def learned() -> bool:
        return bool((await profile(extractor, user.scope)).pairs)

    assert await eventually(learned)
    key_rows = "SELECT wrapped_key FROM learning_keys WHERE tenant_id = ? AND user_id = ?"
    capsule_rows = "SELECT sealed FROM learning_capsules WHERE tenant_id = ? AND user_id = ?"
    ids = (TENANT, user.user_id)
    (sealed,) = stored_rows(data_dir, capsule_rows, ids)[0]
    assert len(stored_rows(data_dir, key_rows, ids)) == 1
    assert b"Quillmoor" not in bytes(sealed)  # type: ignore[arg-type]
    raw = learning_file_bytes(data_dir)
    for form in (b"Quillmoor", b"quillmoor", b"Observatory", b"the annex"):
        assert form not in raw

    await gateway.command(user.user_id, "s1", "FORGET_EVERYTHING", LATER_US, timeout=30.0)
    assert stored_rows(data_dir, key_rows, ids) == []
    assert stored_rows(data_dir, capsule_rows, ids) == []
    after = await profile(extractor, user.scope)
    assert after.served and not after.pairs and after.version == 0
    brief = await user.brief("the annex?", LATER_US + MINUTE_US)
    assert "Quillmoor Observatory" not in str(brief.hints)


async def test_company_pack_is_operator_only_audited_and_refused_with_an_identity_document(
    mesh: Mesh, gateway: GatewayClient, extractor: extractor_grpc.AtomExtractorServiceStub
) -> None:
    operator = scope_pb2.UserScope(tenant_id=TENANT, user_id="operator-ana")
    kind = extractor_pb
    entries = [
        kind.VocabularyEntry(term="Zephyrline", kind=kind.VOCABULARY_KIND_PRODUCT),
        kind.VocabularyEntry(term="Passport 123456789", kind=kind.VOCABULARY_KIND_TERM),
    ]
    request = gateway_pb.PutVocabularyPackRequest(
        scope=operator, entries=entries, reason="spring catalogue", now=timestamp_of(NOW_US)
    )
    channel = grpc.aio.insecure_channel(mesh.addrs["gateway"])
    stub = gateway_grpc.GatewayServiceStub(channel)
    tenant_only = [("authorization", f"Bearer {TENANT_KEY}")]
    operator_metadata = [*tenant_only, ("x-internal-token", INTERNAL_TOKEN)]
    try:
        with pytest.raises(grpc.aio.AioRpcError) as not_operator:
            await stub.PutVocabularyPack(request, metadata=tenant_only, timeout=10)
        assert not_operator.value.code() in (
            grpc.StatusCode.PERMISSION_DENIED,
            grpc.StatusCode.UNAUTHENTICATED,
        )
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.PutVocabularyPack(request, metadata=operator_metadata, timeout=10)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert details_of(refused.value)[1] == ["entries[1].term"]
        before = await extractor.ListVocabularyPacks(
            extractor_pb.ListVocabularyPacksRequest(scope=operator)
        )
        assert all("Passport" not in str(v) for v in before.versions)

        del request.entries[1:]
        request.entries.add(term="Head Chef", kind=kind.VOCABULARY_KIND_ROLE, sounds_like="")
        stored = await stub.PutVocabularyPack(request, metadata=operator_metadata, timeout=10)
        assert not stored.unchanged and len(stored.sha256) == 64
        again = await stub.PutVocabularyPack(request, metadata=operator_metadata, timeout=10)
        assert again.unchanged and again.version == stored.version
    finally:
        await channel.close()
    versions = (
        await extractor.ListVocabularyPacks(extractor_pb.ListVocabularyPacksRequest(scope=operator))
    ).versions
    latest = versions[0]
    assert (latest.version, latest.added_by, latest.reason) == (
        stored.version,
        "operator-ana",
        "spring catalogue",
    )
    assert latest.add_time.ToMicroseconds() == NOW_US
    # Every member of the company hears the pack's terms.
    member = User(mesh, gateway)
    brief = await member.brief("do we have the Zephyrline in stock?", LATER_US)
    assert {"Zephyrline", "Head Chef"} <= set(brief.hints.vocabulary)


async def test_global_signals_are_opt_in_and_released_only_at_k_contributors(
    mesh: Mesh, gateway: GatewayClient, extractor: extractor_grpc.AtomExtractorServiceStub
) -> None:
    said, meant = made_up_word(), made_up_word()
    sentence = f"When I say {said}, I mean {meant}."

    async def released() -> list[extractor_pb.GlobalSignal]:
        reply = await extractor.ReleaseGlobalSignals(
            extractor_pb.ReleaseGlobalSignalsRequest(
                scope=scope_pb2.UserScope(tenant_id=TENANT, user_id="operator"), limit=1000
            )
        )
        assert reply.k_threshold == K_THRESHOLD
        return [s for s in reply.signals if (s.heard, s.meant) == (said, meant)]

    async def speaker(opted_in: bool) -> User:
        user = User(mesh, gateway)
        await extractor.SetLearningConsent(
            extractor_pb.SetLearningConsentRequest(
                scope=user.scope, global_signals_opt_in=opted_in, now=timestamp_of(NOW_US)
            )
        )
        await user.say(sentence, NOW_US)

        async def learned() -> bool:
            return bool((await profile(extractor, user.scope)).pairs)

        assert await eventually(learned)
        return user

    # Users who did not opt in contribute nothing, however many say it.
    for _ in range(K_THRESHOLD):
        await speaker(False)
    assert await released() == []
    contributors = [await speaker(True) for _ in range(K_THRESHOLD - 1)]
    assert await released() == []
    contributors.append(await speaker(True))
    (signal,) = await released()
    assert signal.contributors == K_THRESHOLD and signal.kind == "SLANG"
    # Withdrawing consent withdraws the contribution: below k again, nothing is released.
    await extractor.SetLearningConsent(
        extractor_pb.SetLearningConsentRequest(
            scope=contributors[0].scope, global_signals_opt_in=False, now=timestamp_of(LATER_US)
        )
    )
    assert await released() == []


def _package(message: extractor_pb.LearningPackage) -> SignedPackage:
    return SignedPackage(
        message.package_id,
        message.version,
        message.artifact,
        message.sha256,
        message.signature,
        message.key_id,
    )


async def test_signed_packages_are_verified_applied_once_rolled_back_and_on_the_ledger(
    mesh: Mesh,
    tmp_path: Path,
    gateway: GatewayClient,
    extractor: extractor_grpc.AtomExtractorServiceStub,
) -> None:
    user = User(mesh, gateway)
    await user.say("When I say the den, I mean Larkspur Studio.", NOW_US)

    async def learned(count: int) -> Callable[[], Awaitable[bool]]:
        async def check() -> bool:
            return len((await profile(extractor, user.scope)).pairs) >= count

        return check

    assert await eventually(await learned(1))
    key = await extractor.GetPackageSigningKey(
        extractor_pb.GetPackageSigningKeyRequest(scope=user.scope)
    )

    async def build() -> SignedPackage:
        reply = await extractor.BuildLearningPackage(
            extractor_pb.BuildLearningPackageRequest(
                scope=user.scope, identity_verified=True, now=timestamp_of(LATER_US)
            )
        )
        return _package(reply.package)

    first = await build()
    assert first.version == 1 and (await build()) == first
    device = PackageApplier(open_device_db(tmp_path / "device.sqlite3"), key.public_key)

    tampered = SignedPackage(
        first.package_id,
        first.version,
        first.artifact.replace(b"Larkspur", b"Larkspux"),
        first.sha256,
        first.signature,
        first.key_id,
    )
    with pytest.raises(PackageRefused):
        device.apply([tampered])
    assert device.active_version(first.package_id) is None

    events = device.apply([first])
    assert device.apply([first]) == []  # applying twice is applying once
    await user.say("Please call it the atelier, not the studio.", NOW_US + MINUTE_US)
    assert await eventually(await learned(2))
    second = await build()
    assert second.version == 2
    events += device.apply([second, first])
    assert device.active_version(first.package_id) == 2
    assert ["the studio", "the atelier"] in device.active_artifact(first.package_id)["pairs"]  # type: ignore[operator]
    rolled_back = device.rollback(first.package_id)
    assert rolled_back is not None
    events.append(rolled_back)
    assert device.active_version(first.package_id) == 1
    assert ["the studio", "the atelier"] not in device.active_artifact(first.package_id)["pairs"]  # type: ignore[operator]

    async def report(event_index: int) -> extractor_pb.RecordPackageEventResponse:
        event = events[event_index]
        action = (
            extractor_pb.PACKAGE_ACTION_APPLIED
            if event.action is PackageAction.APPLIED
            else extractor_pb.PACKAGE_ACTION_ROLLED_BACK
        )
        return await extractor.RecordPackageEvent(
            extractor_pb.RecordPackageEventRequest(
                scope=user.scope,
                package_id=event.package_id,
                version=event.version,
                action=action,
                device_id="phone-1",
                sha256=event.sha256,
                now=timestamp_of(LATER_US + event_index),
            )
        )

    assert [(e.version, e.action) for e in events] == [
        (1, PackageAction.APPLIED),
        (2, PackageAction.APPLIED),
        (2, PackageAction.ROLLED_BACK),
    ]
    recorded = [await report(i) for i in range(len(events))]
    assert not any(r.duplicate for r in recorded)
    assert (await report(0)).duplicate  # a repeated report writes nothing
    channel = engine_channel(mesh.addrs["ledger"], INTERNAL_TOKEN, 10.0)
    try:
        ledger = ledger_grpc.LedgerServiceStub(channel)
        stream = ledger.Read(ledger_pb.ReadRequest(scope=user.scope))
        kinds = [
            r.event.event_type
            async for r in stream
            if r.event.event_type.startswith("LEARNING_PACKAGE_")
        ]
        verified = await ledger.Verify(ledger_pb.VerifyRequest(scope=user.scope))
    finally:
        await channel.close()
    assert kinds == [
        "LEARNING_PACKAGE_APPLIED",
        "LEARNING_PACKAGE_APPLIED",
        "LEARNING_PACKAGE_ROLLED_BACK",
    ]
    assert verified.intact


async def test_a_subject_the_user_asked_not_to_store_teaches_the_capsule_nothing(
    mesh: Mesh, gateway: GatewayClient, extractor: extractor_grpc.AtomExtractorServiceStub
) -> None:
    user = User(mesh, gateway)
    await gateway.command(user.user_id, "s1", "DO_NOT_STORE", NOW_US, "barn", timeout=30.0)
    await user.say("When I say the barn, I mean Hollin Farm.", NOW_US + 1)
    await user.say("When I say the loft, I mean Ashgrove Mill.", NOW_US + 2)

    async def learned() -> bool:
        return bool((await profile(extractor, user.scope)).pairs)

    assert await eventually(learned)
    held = await profile(extractor, user.scope)
    assert [(p.said, p.meant) for p in held.pairs] == [("the loft", "Ashgrove Mill")]


async def test_a_forgotten_conversation_takes_what_it_taught(
    mesh: Mesh, gateway: GatewayClient, extractor: extractor_grpc.AtomExtractorServiceStub
) -> None:
    user = User(mesh, gateway)
    await user.say("When I say the loft, I mean Ashgrove Mill.", NOW_US, session_id="s0")
    await user.say("When I say the barn, I mean Hollin Farm.", NOW_US + 1, session_id="s1")
    await user.say("Our supplier is Talverra Timber.", NOW_US + 2, session_id="s1")
    reply = await user.say("can we scrap this whole conversation", NOW_US + 3, session_id="s1")
    assert reply.command == "FORGET_THREAD"

    async def forgotten() -> bool:
        held = await profile(extractor, user.scope)
        return [(p.said, p.meant) for p in held.pairs] == [("the loft", "Ashgrove Mill")]

    assert await eventually(forgotten)
    held = await profile(extractor, user.scope)
    assert list(held.vendors) == []
    brief = await user.brief("what should I order?", LATER_US, session_id="s2")
    assert "Hollin" not in str(brief.hints) and "Talverra" not in str(brief.hints)
    assert ("the loft", "Ashgrove Mill") in pairs_of(brief.hints)


async def test_a_subject_not_to_be_mentioned_leaves_the_learned_hints(
    mesh: Mesh, gateway: GatewayClient, extractor: extractor_grpc.AtomExtractorServiceStub
) -> None:
    user = User(mesh, gateway)
    await user.say("Our supplier is Talverra Timber.", NOW_US)
    await user.say("When I say the shed, I mean Brackenfield Workshop.", NOW_US + 1)

    async def learned() -> bool:
        held = await profile(extractor, user.scope)
        return bool(held.pairs) and bool(held.vendors)

    assert await eventually(learned)
    before = await user.brief("what should I order?", LATER_US)
    assert "Talverra Timber" in before.hints.vocabulary
    await gateway.command(user.user_id, "s1", "DO_NOT_MENTION", LATER_US, "Talverra")
    after = await user.brief("what should I order?", LATER_US + 1)
    assert "talverra" not in str(after).lower()
    assert ("the shed", "Brackenfield Workshop") in pairs_of(after.hints)
