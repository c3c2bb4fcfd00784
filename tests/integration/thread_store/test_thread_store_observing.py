"""The Observer and the Reflector inside the ThreadStore (seed 004): a closed session is
observed and its topic thread reflected, by the rules or by a model (a fake
OpenAI-compatible provider: a real HTTP server on loopback); the thread's summary is the
reflection's, with its provenance; nothing the store no longer holds comes back through an
observation or a reflection, and no credential or INTERNAL_ONLY text reaches the provider."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from memmesh.engines.thread_store.adapters.sql_store import SqlThreadStore, migrations
from memmesh.engines.thread_store.domain.model import Role, Turn
from memmesh.engines.thread_store.domain.sessions import DEFAULT_SESSION_GAP_US
from memmesh.engines.thread_store.observing import Observing
from memmesh.engines.thread_store.use_cases import ThreadStoreUseCases
from memmesh.observation import ObservationSettings
from memmesh.storage.sql import Dialect, SqliteDatabase
from memmesh.testing.fake_provider import FakeProvider, envelope
from memmesh.testing.observation import semantic_settings

T0 = 1_767_225_600_000_000
MINUTE = 60_000_000
DAY = 24 * 60 * MINUTE
WHO = ("tenant", "user")
API_KEY = "sk-live-thread-observing-key-0123456789"
CARD = "4111 1111 1111 1111"
KITCHEN = (
    ("k1", "Marco and I are redoing the kitchen with oak cabinets."),
    ("k2", "We decided to keep the sink where it is."),
    ("k3", f"My card number is {CARD} if the store asks."),
    ("k4", "Do we need a permit for the kitchen wiring?"),
)
OBSERVED = {
    "observations": [
        {"text": "User and Marco are redoing the kitchen.", "kind": "fact", "turn_ids": ["k1"]},
        {"text": "User decided to keep the sink.", "kind": "decision", "turn_ids": ["k2"]},
        {
            "text": "User asked whether a permit is needed for the kitchen wiring.",
            "kind": "question",
            "turn_ids": ["k4"],
        },
    ]
}
REFLECTED = {
    "summary": "Kitchen redo with Marco: oak cabinets, the sink stays. Open: a wiring permit.",
    "left_off": ["Still open: the permit for the kitchen wiring", "Decided: the sink stays"],
}


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    fake = FakeProvider()

    def answer(body: dict[str, Any]) -> tuple[int, str, float]:
        reply = OBSERVED if body["model"] == "observer-model" else REFLECTED
        return 200, envelope(json.dumps(reply)), 0.0

    fake.script = answer
    yield fake
    fake.close()


def semantic(fake: FakeProvider, **overrides: Any) -> ObservationSettings:
    # Short conversations are past the thresholds, so the model is asked.
    thresholds = {"message_threshold_tokens": 1, "observation_threshold_tokens": 1}
    return semantic_settings(fake, API_KEY, **(thresholds | {"max_retries": 0} | overrides))


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlThreadStore]:
    opened = SqlThreadStore(
        SqliteDatabase.open(tmp_path / "threads.sqlite3", migrations(Dialect.SQLITE))
    )
    yield opened
    await opened.close()


def service(store: SqlThreadStore, settings: ObservationSettings | None) -> ThreadStoreUseCases:
    observing = Observing(store, settings) if settings else None
    return ThreadStoreUseCases(store, None, DEFAULT_SESSION_GAP_US, 6, observing=observing)


async def say(
    threads: ThreadStoreUseCases, session: str, turns: tuple[tuple[str, str], ...], day: int
) -> None:
    for index, (turn_id, text) in enumerate(turns):
        turn = Turn(turn_id, session, Role.USER, text, T0 + day * DAY + index * MINUTE)
        await threads.append_turn(*WHO, turn)


async def test_a_model_observes_the_session_and_reflects_its_thread(
    store: SqlThreadStore, provider: FakeProvider
) -> None:
    threads = service(store, semantic(provider))
    await say(threads, "s1", KITCHEN, 0)
    await threads.close_session(*WHO, "s1")
    await threads.observed()
    resumed = await threads.resume(*WHO, "s2", T0 + DAY)
    top = resumed.candidates[0]
    assert top.summary == REFLECTED["summary"]
    assert resumed.left_off == tuple(REFLECTED["left_off"])
    made = top.summary_provenance
    assert made is not None and (made.provider, made.model) == ("fake", "reflector-model")
    assert not made.fallback_used and len(made.input_hash) == 64
    models = [request["model"] for request in provider.requests]
    assert models == ["observer-model", "reflector-model"]
    for request in provider.requests:
        # The key goes in the Authorization header only; the card never leaves the mesh.
        assert request["auth"] == f"Bearer {API_KEY}"
        sent = json.dumps({k: v for k, v in request.items() if k != "auth"})
        assert CARD not in sent and API_KEY not in sent
    async with store.read(*WHO) as tx:
        observed = (await tx.observations_of(["s1"]))["s1"]
    assert [o.turn_ids for o in observed.observations] == [("k1",), ("k2",), ("k4",)]
    assert observed.provenance[0].model == "observer-model"


async def test_the_rules_reflect_a_thread_when_no_model_is_configured(
    store: SqlThreadStore,
) -> None:
    threads = service(store, None)
    await say(threads, "s1", KITCHEN, 0)
    await threads.close_session(*WHO, "s1")
    top = (await threads.resume(*WHO, "s2", T0 + DAY)).candidates[0]
    made = top.summary_provenance
    assert made is not None and (made.provider, made.fallback_used) == ("rules", False)
    # Built from the thread's fields and observations, not the user's sentences joined;
    # never the card.
    assert top.summary.startswith(f"{top.title}:") and "Open:" in top.summary
    assert "Marco and I" not in top.summary and CARD not in top.summary


async def test_a_failing_model_leaves_the_rules_reflection_with_its_reason(
    store: SqlThreadStore, provider: FakeProvider
) -> None:
    provider.script = lambda body: (200, envelope("not json"), 0.0)
    threads = service(store, semantic(provider))
    await say(threads, "s1", KITCHEN, 0)
    await threads.close_session(*WHO, "s1")
    await threads.observed()
    top = (await threads.resume(*WHO, "s2", T0 + DAY)).candidates[0]
    made = top.summary_provenance
    assert made is not None and (made.fallback_used, made.fallback_reason) == (
        True,
        "invalid_output",
    )
    assert top.summary and "permit" in top.summary.lower()


async def test_forgetting_a_session_reflects_its_thread_without_it(
    store: SqlThreadStore,
) -> None:
    threads = service(store, None)
    await say(threads, "s1", KITCHEN, 0)
    await threads.close_session(*WHO, "s1")
    later = (
        ("m1", "Marco fitted the oak cabinets in the kitchen today."),
        ("m2", "The kitchen tiles from Porcelanosa arrive on Friday."),
    )
    await say(threads, "s2", later, 3)
    await threads.close_session(*WHO, "s2")
    before = (await threads.resume(*WHO, "s3", T0 + 4 * DAY)).candidates[0]
    assert before.session_ids == ("s1", "s2") and "Porcelanosa" in before.summary
    await threads.forget_session(*WHO, "s2")
    after = (await threads.resume(*WHO, "s3", T0 + 4 * DAY)).candidates[0]
    assert after.session_ids == ("s1",) and after.summary_provenance is not None
    assert "Porcelanosa" not in after.summary and "tiles" not in after.summary.lower()
    async with store.read(*WHO) as tx:
        assert await tx.observations_of(["s2"]) == {}


async def test_a_result_about_turns_forgotten_meanwhile_is_never_stored(
    store: SqlThreadStore, provider: FakeProvider
) -> None:
    provider.script = lambda body: (200, envelope(json.dumps(OBSERVED)), 0.6)
    threads = service(store, semantic(provider))
    await say(threads, "s1", KITCHEN, 0)
    await threads.close_session(*WHO, "s1")
    # The model is still thinking when the conversation is forgotten.
    await threads.forget_session(*WHO, "s1")
    await threads.observed()
    async with store.read(*WHO) as tx:
        assert await tx.observations_of(["s1"]) == {}
        assert await tx.reflections_of(["s1"]) == {}


async def test_a_redaction_takes_its_words_out_of_observations_and_reflections(
    store: SqlThreadStore, provider: FakeProvider
) -> None:
    threads = service(store, semantic(provider))
    await say(threads, "s1", KITCHEN, 0)
    await threads.close_session(*WHO, "s1")
    await threads.observed()
    async with store.read(*WHO) as tx:
        assert "s1" in await tx.observations_of(["s1"])
        assert "s1" in await tx.reflections_of(["s1"])
    await threads.redact_turns(*WHO, ["k4"], ["permit"])
    async with store.read(*WHO) as tx:
        assert await tx.observations_of(["s1"]) == {}
        assert await tx.reflections_of(["s1"]) == {}
    top = (await threads.resume(*WHO, "s2", T0 + DAY)).candidates[0]
    said = " ".join((top.summary, *top.unresolved_questions, *top.left_off)).lower()
    assert "permit" not in said and top.summary_provenance is None
