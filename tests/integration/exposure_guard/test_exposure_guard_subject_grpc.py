"""A DO_NOT_MENTION rule on a relation covers the person's name, read from the real capsule
and graph when the rule is set, on SQLite and on PostgreSQL + Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as pb_grpc
from memmesh.testing.in_process import InProcessMesh, start_in_process
from memmesh.testing.scopes import new_scope

NOW = Timestamp(seconds=1_767_225_600)
ENGINES = ["ledger", "exposure_guard", "atom_extractor", "thread_store"]
SPEAK = memory_pb2.EXPOSURE_SAFE_TO_SPEAK


@pytest_asyncio.fixture(params=["sqlite", "postgres+redis"])
async def mesh(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[InProcessMesh]:
    if request.param == "sqlite":
        running = await start_in_process(ENGINES, tmp_path)
    else:
        running = await start_in_process(
            ENGINES,
            tmp_path,
            storage_url=request.getfixturevalue("postgres_url"),
            redis_url=request.getfixturevalue("redis_url"),
        )
    yield running
    await running.stop()


@pytest.fixture
def scope() -> scope_pb2.UserScope:
    return new_scope()


async def say(mesh: InProcessMesh, scope: scope_pb2.UserScope, turn_id: str, text: str) -> None:
    turn = memory_pb2.Turn(
        turn_id=turn_id, session_id="s1", role=memory_pb2.ROLE_USER, text=text, time=NOW
    )
    stub = extractor_grpc.AtomExtractorServiceStub(mesh.channel("atom_extractor"))
    await stub.Process(extractor_pb.ProcessRequest(scope=scope, turn=turn, now=NOW))


def offered() -> list[pb.FilterItem]:
    texts = (
        "I need to buy Kwame a birthday present.",
        "Kwame's flight lands at noon.",
        "We are planning a trip to Lisbon.",
    )
    return [pb.FilterItem(item_id=f"e{i}", text=t, exposure=SPEAK) for i, t in enumerate(texts)]


async def test_a_rule_on_a_relation_covers_the_name_of_its_atoms(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    await say(mesh, scope, "t1", "My brother Kwame lives in Accra.")
    guard = pb_grpc.ExposureGuardServiceStub(mesh.channel("exposure_guard"))
    request = pb.FilterRequest(scope=scope, channel=memory_pb2.CHANNEL_VOICE, items=offered())
    # Before the rule every item passes: the filter holds back nothing by name alone.
    assert list((await guard.Filter(request)).allowed_item_ids) == ["e0", "e1", "e2"]

    rule = pb.Rule(
        kind=pb.RULE_KIND_DO_NOT_MENTION, target_type=pb.TARGET_TYPE_TOPIC, target="brother"
    )
    reply = await guard.SetRule(pb.SetRuleRequest(scope=scope, rule=rule, now=NOW))
    assert "kwame" in reply.rule.subject_terms
    [listed] = (await guard.ListRules(pb.ListRulesRequest(scope=scope))).rules
    assert list(listed.subject_terms) == list(reply.rule.subject_terms)

    filtered = await guard.Filter(request)
    assert list(filtered.allowed_item_ids) == ["e2"]
    assert filtered.do_not_mention_hits == 2
    assert [(h.rule, h.target) for h in filtered.hits] == [("DO_NOT_MENTION", "brother")]


async def test_a_new_atom_on_the_subject_grows_the_rule_when_it_is_filtered(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    guard = pb_grpc.ExposureGuardServiceStub(mesh.channel("exposure_guard"))
    rule = pb.Rule(
        kind=pb.RULE_KIND_DO_NOT_MENTION, target_type=pb.TARGET_TYPE_TOPIC, target="brother"
    )
    reply = await guard.SetRule(pb.SetRuleRequest(scope=scope, rule=rule, now=NOW))
    assert "kofi" not in reply.rule.subject_terms
    items = [
        pb.FilterItem(
            item_id="a0",
            atom_id="atom-1",
            key="relationship.brother.kofi",
            text="User has a brother named Kofi.",
            exposure=SPEAK,
        ),
        pb.FilterItem(item_id="e0", text="Kofi called yesterday.", exposure=SPEAK),
    ]
    filtered = await guard.Filter(
        pb.FilterRequest(scope=scope, channel=memory_pb2.CHANNEL_VOICE, items=items)
    )
    assert list(filtered.allowed_item_ids) == []
    [listed] = (await guard.ListRules(pb.ListRulesRequest(scope=scope))).rules
    assert "kofi" in listed.subject_terms


async def test_a_fact_extracted_after_the_rule_grows_it_before_any_brief_offers_its_atom(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    """The rule is set while the fact about the subject is still to be extracted (its
    extraction queued behind a slow mesh): when the extractor stores the fact, the rule
    covers its name at once, so excerpts naming the person are held back even though no
    filtered item ever carried the atom."""
    guard = pb_grpc.ExposureGuardServiceStub(mesh.channel("exposure_guard"))
    rule = pb.Rule(
        kind=pb.RULE_KIND_DO_NOT_MENTION, target_type=pb.TARGET_TYPE_TOPIC, target="brother"
    )
    reply = await guard.SetRule(pb.SetRuleRequest(scope=scope, rule=rule, now=NOW))
    assert "kwame" not in reply.rule.subject_terms
    await say(mesh, scope, "t1", "My brother Kwame lives in Accra.")
    [listed] = (await guard.ListRules(pb.ListRulesRequest(scope=scope))).rules
    assert "kwame" in listed.subject_terms
    request = pb.FilterRequest(scope=scope, channel=memory_pb2.CHANNEL_VOICE, items=offered())
    filtered = await guard.Filter(request)
    assert list(filtered.allowed_item_ids) == ["e2"]
    assert filtered.do_not_mention_hits == 2


async def test_a_fact_about_someone_else_leaves_the_rule_as_it_is(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    guard = pb_grpc.ExposureGuardServiceStub(mesh.channel("exposure_guard"))
    rule = pb.Rule(
        kind=pb.RULE_KIND_DO_NOT_MENTION, target_type=pb.TARGET_TYPE_TOPIC, target="brother"
    )
    await guard.SetRule(pb.SetRuleRequest(scope=scope, rule=rule, now=NOW))
    await say(mesh, scope, "t1", "My sister Ama lives in Kumasi.")
    [listed] = (await guard.ListRules(pb.ListRulesRequest(scope=scope))).rules
    assert not {"ama", "kumasi"} & set(listed.subject_terms)


async def test_a_turn_naming_the_person_with_the_relation_teaches_the_rule_the_name(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    """A relation the capsule has no atom about: the turn held back for saying "my barber"
    gives the name, which the rule covers from then on (stored, so later Briefs too)."""
    guard = pb_grpc.ExposureGuardServiceStub(mesh.channel("exposure_guard"))
    rule = pb.Rule(
        kind=pb.RULE_KIND_DO_NOT_MENTION, target_type=pb.TARGET_TYPE_TOPIC, target="barber"
    )
    await guard.SetRule(pb.SetRuleRequest(scope=scope, rule=rule, now=NOW))
    texts = ("My barber Yaw just moved to Tamale.", "Remind me to pay Yaw on Friday.", "Tea.")
    items = [pb.FilterItem(item_id=f"w{i}", text=t, exposure=SPEAK) for i, t in enumerate(texts)]
    request = pb.FilterRequest(scope=scope, channel=memory_pb2.CHANNEL_VOICE, items=items)
    assert list((await guard.Filter(request)).allowed_item_ids) == ["w2"]
    [listed] = (await guard.ListRules(pb.ListRulesRequest(scope=scope))).rules
    assert "yaw" in listed.subject_terms
    later = [pb.FilterItem(item_id="e0", text="Yaw called.", exposure=SPEAK)]
    request = pb.FilterRequest(scope=scope, channel=memory_pb2.CHANNEL_VOICE, items=later)
    assert list((await guard.Filter(request)).allowed_item_ids) == []
