"""The learning capsule is voice-locked and its correction pairs are sealed (seed 001 §2.4.1),
through real engine processes: a turn whose speaker is not verified is archived and its facts
extracted, but teaches the capsule nothing (no learned pair, no correction pair); the same
words from a verified speaker do. Correction pairs are stored sealed with the user's learning
data key: the raw row holds none of the words, and after "forget everything" the row and the
key are gone, so no copy of the sealed bytes can be opened again."""

# The fixtures imported from test_learning_stores are used as test parameters.
# ruff: noqa: F401, F811

from __future__ import annotations

import random
import sqlite3
import string
from pathlib import Path

from acceptance_mesh import MINUTE_US, NOW_US, TENANT, User

# The learning stores' mesh (SQLite, one data directory) and its clients.
from test_learning_stores import (
    data_dir,
    eventually,
    extractor,
    gateway,
    mesh,
)

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.client.gateway import GatewayClient
from memmesh.runtime.supervisor import Mesh


def name() -> str:
    """A capitalised made-up name no other test says."""
    return "".join(random.choices(string.ascii_lowercase, k=9)).capitalize()


async def say(user: User, text: str, time_us: int, verified: bool) -> None:
    """One user turn through the gateway, its extraction delivered before the answer."""
    user.turns += 1
    reply = await user.gateway.ingest(
        user.user_id, "s1", f"t{user.turns}", "user", text, time_us, identity_verified=verified
    )
    assert reply.ok and not reply.extraction_queued


async def learned(
    extractor: extractor_grpc.AtomExtractorServiceStub, user: User
) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(the capsule's learned pairs, the correction pair log) as a verified voice sees them."""
    profile = await extractor.GetLearningProfile(
        extractor_pb.GetLearningProfileRequest(scope=user.scope, identity_verified=True)
    )
    logged = await extractor.ListCorrections(
        extractor_pb.ListCorrectionsRequest(scope=user.scope, identity_verified=True)
    )
    return (
        {(p.said, p.meant) for p in profile.pairs},
        {(r.correction.heard, r.correction.meant) for r in logged.corrections},
    )


async def atom_texts(extractor: extractor_grpc.AtomExtractorServiceStub, user: User) -> list[str]:
    listed = await extractor.ListAtoms(extractor_pb.ListAtomsRequest(scope=user.scope))
    return [a.text for a in listed.atoms]


def capsule_rows(data_dir: Path, table: str, user: User) -> list[tuple[object, ...]]:
    file = (
        "atom_extractor.sqlite3"
        if table == "capsule_corrections"
        else ("atom_extractor_learning.sqlite3")
    )
    db = sqlite3.connect(data_dir / file)
    try:
        return list(
            db.execute(
                f"SELECT * FROM {table} WHERE tenant_id = ? AND user_id = ?",  # noqa: S608
                (TENANT, user.user_id),
            ).fetchall()
        )
    finally:
        db.close()


async def test_an_unverified_speaker_is_remembered_but_teaches_the_capsule_nothing(
    gateway: GatewayClient, mesh: Mesh, extractor: extractor_grpc.AtomExtractorServiceStub
) -> None:
    user = User(mesh, gateway)
    sister, other, place = name(), name(), name()
    await say(user, f"My sister is named {sister}.", NOW_US, verified=False)
    await say(user, f"When I say the barn, I mean {place} Workshop.", NOW_US + 1, verified=False)
    await say(user, f"No, I said {other}, not {sister}.", NOW_US + 2, verified=False)
    # Archived and extracted as before: the fact is there and the correction applied to it.
    assert any(other in text for text in await atom_texts(extractor, user))
    assert await learned(extractor, user) == (set(), set())

    # The same kind of words from the verified speaker teach it.
    third = name()
    await say(user, f"When I say the loft, I mean {place} Studio.", NOW_US + 3, verified=True)
    await say(user, f"No, I said {third}, not {other}.", NOW_US + 4, verified=True)
    pairs, corrections = await learned(extractor, user)
    assert ("the loft", f"{place} Studio") in pairs
    assert ("the barn", f"{place} Workshop") not in pairs
    assert corrections == {(other, third)}
    brief = await user.brief("what about the loft?", NOW_US + MINUTE_US)
    assert f"{place} Studio" in str(brief.hints) and f"{place} Workshop" not in str(brief.hints)


async def test_correction_pairs_are_sealed_at_rest_and_shredded_with_the_capsule(
    gateway: GatewayClient,
    mesh: Mesh,
    data_dir: Path,
    extractor: extractor_grpc.AtomExtractorServiceStub,
) -> None:
    user = User(mesh, gateway)
    heard, meant = name(), name()
    await say(user, f"My brother is named {heard}.", NOW_US, verified=True)
    await say(user, f"No, I said {meant}, not {heard}.", NOW_US + 1, verified=True)
    assert (await learned(extractor, user))[1] == {(heard, meant)}

    [row] = capsule_rows(data_dir, "capsule_corrections", user)
    raw = b"".join(value if isinstance(value, bytes) else str(value).encode() for value in row)
    for word in (heard, meant):
        for form in (word, word.lower()):
            assert form.encode() not in raw
    sealed = row[-1]
    assert isinstance(sealed, bytes) and len(sealed) > 28
    assert len(capsule_rows(data_dir, "learning_keys", user)) == 1

    await gateway.command(user.user_id, "s1", "FORGET_EVERYTHING", NOW_US + MINUTE_US, timeout=30.0)

    async def shredded() -> bool:
        return not capsule_rows(data_dir, "capsule_corrections", user) and not capsule_rows(
            data_dir, "learning_keys", user
        )

    # The sealed bytes had only this key: with it gone, a kept copy of them opens nowhere.
    assert await eventually(shredded)
    assert await learned(extractor, user) == (set(), set())
