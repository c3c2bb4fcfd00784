"""Forget means forget (seed 001 §2.11.5, §2.11.11, §2.17 Q16), through the gateway against
real engine processes (OutboxSync included): after each privacy command what it forgets is
gone from Remember, from every part of a Brief (atoms, excerpts, working memory, rolling
summary, episode bridge), from the extractor's logs and from devices' copies, and what was
not forgotten stays."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest
from acceptance_mesh import (
    BRIEF_BUDGET_MS,
    INTERNAL_TOKEN,
    MINUTE_US,
    NOW_US,
    OTHER_TENANT,
    OTHER_TENANT_KEY,
    SECOND_US,
    TENANT,
    TENANT_KEY,
    User,
    response_text,
)
from acceptance_mesh import ENGINES as PER_TURN_ENGINES

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.client.gateway import GatewayClient
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2 as sync_pb
from memmesh.outbox_sync.v1 import outbox_sync_service_pb2_grpc as sync_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.supervisor import Mesh
from memmesh.runtime.timeconv import timestamp_of

ENGINES = [*PER_TURN_ENGINES, "outbox_sync"]
# A Brief a little later than the turns, and a next session well after the last.
LATER_US = NOW_US + 10 * MINUTE_US
NEXT_SESSION_US = NOW_US + 6 * 60 * MINUTE_US
SETTLE_S = 15.0


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    env = {
        "MEMMESH_DATA_DIR": str(tmp_path_factory.mktemp("privacy_commands")),
        "MEMMESH_STORAGE_URL": "sqlite",
        "MEMMESH_GATEWAY_TENANT_KEYS": (
            f'{{"{TENANT}": "{TENANT_KEY}", "{OTHER_TENANT}": "{OTHER_TENANT_KEY}"}}'
        ),
        "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": str(BRIEF_BUDGET_MS),
        # The gateway retries a queued extraction only after a minute, so an extraction said
        # before a forget is still queued when the forget comes.
        "MEMMESH_GATEWAY_RETRY_INITIAL_S": "60",
        "MEMMESH_GATEWAY_RETRY_MAX_S": "60",
        "MEMMESH_ATOM_EXTRACTOR_EFFECT_RETRY_INITIAL_S": "0.1",
        "MEMMESH_ATOM_EXTRACTOR_EFFECT_RETRY_MAX_S": "0.5",
        "MEMMESH_LOG_LEVEL": "WARNING",
    }
    with Mesh(list(ENGINES), env=env) as running:
        yield running


@pytest.fixture
async def user(mesh: Mesh) -> AsyncIterator[User]:
    async with GatewayClient(
        mesh.addrs["gateway"], TENANT_KEY, tenant_id=TENANT, internal_token=INTERNAL_TOKEN
    ) as gateway:
        yield User(mesh, gateway)


async def eventually(check: Callable[[], Awaitable[bool]], within_s: float = SETTLE_S) -> bool:
    """True once `check` holds (the forget's effects are delivered in the background after
    their first attempt); False when it never did within the time."""
    deadline = time.monotonic() + within_s
    while True:
        if await check():
            return True
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.25)


async def everything_said_back(user: User, session_id: str, now_us: int, query: str) -> str:
    """Every text a user's memory can give back: Briefs (same and given session), Remember,
    the capsule and the extractor's rejection, provenance and correction logs."""
    brief = await user.brief(query, now_us, session_id)
    remember = await user.gateway.remember(user.user_id)
    async with engine_channel(user.mesh.addrs["atom_extractor"], INTERNAL_TOKEN, 5.0) as channel:
        stub = extractor_grpc.AtomExtractorServiceStub(channel)
        logs = [
            await stub.ListRejections(extractor_pb.ListRejectionsRequest(scope=user.scope)),
            await stub.ListProvenance(extractor_pb.ListProvenanceRequest(scope=user.scope)),
            await stub.ListCorrections(extractor_pb.ListCorrectionsRequest(scope=user.scope)),
            await stub.ListAtoms(extractor_pb.ListAtomsRequest(scope=user.scope, page_size=1000)),
        ]
    return "\n".join([response_text(brief), *remember, *(response_text(m) for m in logs)])


def leaked(text: str, words: tuple[str, ...]) -> list[str]:
    folded = text.casefold()
    return [w for w in words if w.casefold() in folded]


async def subject_key_id(user: User) -> str:
    async with engine_channel(user.mesh.addrs["ledger"], INTERNAL_TOKEN, 5.0) as channel:
        reply = await ledger_grpc.LedgerServiceStub(channel).GetSubjectKey(
            ledger_pb.GetSubjectKeyRequest(scope=user.scope)
        )
    return str(reply.key_id)


async def guard_rules(user: User) -> list[guard_pb.Rule]:
    """The user's exposure rules as the ExposureGuard holds them."""
    async with engine_channel(user.mesh.addrs["exposure_guard"], INTERNAL_TOKEN, 5.0) as channel:
        reply = await guard_grpc.ExposureGuardServiceStub(channel).ListRules(
            guard_pb.ListRulesRequest(scope=user.scope)
        )
    return list(reply.rules)


async def device_copies(user: User) -> list[sync_pb.OutboxItem]:
    async with engine_channel(user.mesh.addrs["outbox_sync"], INTERNAL_TOKEN, 5.0) as channel:
        reply = await sync_grpc.OutboxSyncServiceStub(channel).Pull(
            sync_pb.PullRequest(scope=user.scope, after_cursor=0)
        )
    return list(reply.items)


async def mirror_on_device(user: User, atom_ids: list[str]) -> None:
    """A device mirrors the user's atoms (encrypted on the device; opaque to the server)."""
    items = [
        sync_pb.OutboxItem(
            item_id=f"dev-{atom_id}",
            item_kind="atom",
            ciphertext=b"sealed:" + atom_id.encode(),
            create_time=timestamp_of(NOW_US),
            logical_key=atom_id,
            version=1,
        )
        for atom_id in atom_ids
    ]
    async with engine_channel(user.mesh.addrs["outbox_sync"], INTERNAL_TOKEN, 5.0) as channel:
        await sync_grpc.OutboxSyncServiceStub(channel).Push(
            sync_pb.PushRequest(
                scope=user.scope, device_id="phone", items=items, now=timestamp_of(NOW_US)
            )
        )


async def test_forget_reaches_briefs_bridge_logs_and_devices(user: User) -> None:
    await user.say("My sister Ana lives in Porto.", NOW_US)
    await user.say("I live in Lisbon and I'm a nurse.", NOW_US + SECOND_US)
    [sister] = [a for a in await user.atoms() if a.key.startswith("relationship.sister")]
    await mirror_on_device(user, [sister.atom_id])
    gone = ("Ana", "Porto")
    # Porto is in no atom: only the transcript's copies (working memory, summary) hold it.
    before = await everything_said_back(user, "s1", LATER_US, "where does my sister live")
    assert leaked(before, gone) == ["Ana", "Porto"]  # the checks below can see a leak

    reply = await user.say("please forget what I told you about my sister", NOW_US + 2 * SECOND_US)
    assert reply.command == "FORGET"

    async def forgotten_in(session_id: str, now_us: int) -> bool:
        said = await everything_said_back(user, session_id, now_us, "where does my sister live")
        return not leaked(said, gone)

    # The same session: working memory and the rolling summary.
    assert await eventually(lambda: forgotten_in("s1", LATER_US))
    await user.gateway.close_session(user.user_id, "s1", LATER_US)
    # The next session: excerpts, digests and the episode bridge.
    assert await eventually(lambda: forgotten_in("s2", NEXT_SESSION_US))
    kept = await everything_said_back(user, "s2", NEXT_SESSION_US, "where do I live")
    assert "Lisbon" in kept
    # Every device deletes its copy: the mirror holds a tombstone and no ciphertext of it.
    copies = [c for c in await device_copies(user) if c.logical_key == sister.atom_id]
    assert [(c.tombstone, c.ciphertext) for c in copies] == [(True, b"")]


async def test_do_not_store_keeps_nothing_of_its_turn(user: User) -> None:
    await user.say("I play the cello.", NOW_US)
    reply = await user.say("off the record, my cousin Petra is in rehab", NOW_US + SECOND_US)
    assert reply.command == "DO_NOT_STORE"
    gone = ("Petra", "rehab")

    async def forgotten_in(session_id: str, now_us: int) -> bool:
        said = await everything_said_back(user, session_id, now_us, "how is my cousin")
        return not leaked(said, gone)

    assert await eventually(lambda: forgotten_in("s1", LATER_US))
    await user.gateway.close_session(user.user_id, "s1", LATER_US)
    assert await eventually(lambda: forgotten_in("s2", NEXT_SESSION_US))
    assert "cello" in await everything_said_back(user, "s2", NEXT_SESSION_US, "what do I play")


async def test_forget_this_conversation_forgets_its_atoms(user: User) -> None:
    await user.say("I live in Lisbon.", NOW_US, session_id="s0")
    await user.gateway.close_session(user.user_id, "s0", NOW_US + SECOND_US)
    start = NOW_US + 3 * 60 * MINUTE_US
    await user.say("My brother Kwame is a pilot.", start, session_id="s1")
    await user.say("I live in Lisbon.", start + SECOND_US, session_id="s1")
    reply = await user.say("can we scrap this whole conversation", start + 2 * SECOND_US, "s1")
    assert reply.command == "FORGET_THREAD"
    keys = sorted(a.key for a in await user.atoms())
    # Kwame was only said here; Lisbon was said in an earlier conversation as well.
    assert keys == ["identity.residence"]

    async def forgotten() -> bool:
        said = await everything_said_back(user, "s2", start + 6 * 60 * MINUTE_US, "my brother")
        return not leaked(said, ("Kwame", "pilot"))

    assert await eventually(forgotten)


async def test_forget_everything_through_command(user: User) -> None:
    # A rule whose target is a name: the guard must not keep it after the forget.
    await user.gateway.command(user.user_id, "s1", "DO_NOT_MENTION", NOW_US - SECOND_US, "Abena")

    async def ruled() -> bool:
        return [r.target for r in await guard_rules(user)] == ["abena"]

    assert await eventually(ruled)
    await user.say("My brother Kwame is a pilot.", NOW_US)
    await user.say("I'm allergic to walnuts.", NOW_US + SECOND_US)
    atom_ids = [a.atom_id for a in await user.atoms()]
    assert len(atom_ids) == 2
    await mirror_on_device(user, atom_ids)
    key_before = await subject_key_id(user)
    await user.gateway.command(user.user_id, "s1", "FORGET_EVERYTHING", NOW_US + 2 * SECOND_US)
    assert await user.atoms() == []
    assert await user.gateway.remember(user.user_id) == []
    gone = ("Kwame", "pilot", "walnut")

    async def forgotten_in(session_id: str, now_us: int) -> bool:
        said = await everything_said_back(user, session_id, now_us, "my brother and allergies")
        return not leaked(said, gone)

    assert await eventually(lambda: forgotten_in("s1", LATER_US))
    assert await eventually(lambda: forgotten_in("s2", NEXT_SESSION_US))
    copies = await device_copies(user)
    assert sorted(c.logical_key for c in copies) == sorted(atom_ids)
    assert all(c.tombstone and not c.ciphertext for c in copies)

    # The Ledger's subject key is destroyed (a later write gets a fresh one); the chain
    # still verifies.
    async def shredded() -> bool:
        return await subject_key_id(user) != key_before

    assert await eventually(shredded)

    # The ExposureGuard holds no rule of the user (its targets and subject terms name people).
    async def unruled() -> bool:
        return await guard_rules(user) == []

    assert await eventually(unruled)
    async with engine_channel(user.mesh.addrs["ledger"], INTERNAL_TOKEN, 5.0) as channel:
        verified = await ledger_grpc.LedgerServiceStub(channel).Verify(
            ledger_pb.VerifyRequest(scope=user.scope)
        )
    assert verified.intact and verified.event_count > 0

    # Across both outboxes (the gateway's and the extractor's), nothing is dead or waiting.
    async def settled() -> bool:
        debug = await user.gateway.debug_user(user.user_id)
        return debug.dead_effects == 0 and not [
            e for e in debug.effects if "pending:" in e or "UNAVAILABLE" in e
        ]

    assert await eventually(settled)
    debug = await user.gateway.debug_user(user.user_id)
    assert not any(e.startswith("pending:extract") for e in debug.effects)


async def test_a_queued_extraction_of_a_forgotten_fact_is_dropped_and_its_turn_redacted(
    mesh: Mesh, user: User
) -> None:
    await user.say("I play the cello.", NOW_US)
    mesh.pause("atom_extractor")
    try:
        queued = await user.say("My brother Kwame is a pilot.", NOW_US + SECOND_US)
    finally:
        mesh.resume("atom_extractor")
    assert queued.extraction_queued
    debug = await user.gateway.debug_user(user.user_id)
    assert "pending:extract=1" in debug.effects

    await user.gateway.command(user.user_id, "s1", "FORGET", NOW_US + 2 * SECOND_US, "brother")

    debug = await user.gateway.debug_user(user.user_id)
    assert not any(e.startswith(("pending:extract", "dead:extract")) for e in debug.effects)

    async def forgotten() -> bool:
        said = await everything_said_back(user, "s1", LATER_US, "my brother")
        return not leaked(said, ("Kwame", "pilot"))

    assert await eventually(forgotten)
    assert [a.key for a in await user.atoms()] == ["identity.hobby.general"]


async def test_forget_that_sent_while_the_turn_is_still_queued_forgets_that_turn(
    mesh: Mesh, user: User
) -> None:
    """ "Forget that" sent through Command points at the last thing said, even when that
    turn's extraction is still queued in the gateway: the turn before it stays, and no later
    delivery of the queued extraction brings the words back into the capsule, the archive
    or the index."""
    await user.say("I play the cello.", NOW_US)
    mesh.pause("atom_extractor")
    try:
        queued = await user.say(
            "By the way, my neighbor's name is Zofia and she's from Gdansk.", NOW_US + SECOND_US
        )
    finally:
        mesh.resume("atom_extractor")
    assert queued.extraction_queued

    await user.gateway.command(user.user_id, "s1", "FORGET", NOW_US + 2 * SECOND_US)

    async def forgotten_in(session_id: str, now_us: int) -> bool:
        said = await everything_said_back(user, session_id, now_us, "who is my neighbor")
        return not leaked(said, ("Zofia", "Gdansk"))

    assert await eventually(lambda: forgotten_in("s1", LATER_US))
    assert await eventually(lambda: forgotten_in("s2", NEXT_SESSION_US))
    assert [a.key for a in await user.atoms()] == ["identity.hobby.general"]


@pytest.mark.parametrize("sent", [False, True], ids=["spoken", "command"])
async def test_a_forget_whose_index_part_is_still_queued_never_leaks_into_a_brief(
    mesh: Mesh, user: User, sent: bool
) -> None:
    """With the RetrievalRanker down, a forget (spoken or sent) is acknowledged while the
    index still holds the words (the ThreadStore and the extractor keep the removals queued). Once the
    ranker is back, every Brief either fails closed or obeys the forget until the removals
    are delivered; none brings the forgotten words back from the index."""
    await user.say("My sister Ana lives in Porto.", NOW_US)
    await user.say("I live in Lisbon and I'm a nurse.", NOW_US + SECOND_US)
    await user.gateway.close_session(user.user_id, "s1", NOW_US + 2 * SECOND_US)
    gone = ("Ana", "Porto")
    query = "where does my sister live"
    before = await user.gateway.brief(user.user_id, "s2", NEXT_SESSION_US, query)
    assert leaked(response_text(before.bundle), gone)  # the index can give the words back

    mesh.kill("retrieval_ranker")
    try:
        if sent:
            await user.gateway.command(user.user_id, "s2", "FORGET", NEXT_SESSION_US, "sister")
        else:
            reply = await user.say(
                "please forget what I told you about my sister", NEXT_SESSION_US, "s2"
            )
            assert reply.command == "FORGET"
    finally:
        await asyncio.to_thread(mesh.start, ["retrieval_ranker"])

    clean = 0
    deadline = time.monotonic() + SETTLE_S
    while clean < 3 and time.monotonic() < deadline:
        brief = await user.gateway.brief(user.user_id, "s3", NEXT_SESSION_US + MINUTE_US, query)
        assert not leaked(response_text(brief), gone)
        if brief.reason_code in ("", "TIER2_DEGRADED") and brief.bundle.ByteSize():
            clean += 1
        await asyncio.sleep(0.1)
    assert clean == 3  # the forget's removals were delivered and Briefs came back
    kept = await user.brief("where do I live", NEXT_SESSION_US + MINUTE_US, "s3")
    assert "Lisbon" in response_text(kept)
