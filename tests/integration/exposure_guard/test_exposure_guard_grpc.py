"""The ExposureGuard over gRPC with a real Ledger, on SQLite and on PostgreSQL + Redis."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as pb_grpc
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.ledger_keys import SubjectKeys
from memmesh.runtime.errors import details_of
from memmesh.testing.in_process import InProcessMesh, start_in_process
from memmesh.testing.scopes import new_scope

NOW = Timestamp(seconds=1_767_225_600)
SPEAK, TEXT, INTERNAL = (
    memory_pb2.EXPOSURE_SAFE_TO_SPEAK,
    memory_pb2.EXPOSURE_SAFE_TO_TEXT,
    memory_pb2.EXPOSURE_INTERNAL_ONLY,
)


# A DO_NOT_MENTION rule reads its subject from the capsule and the graph when it is set.
ENGINES = ["ledger", "exposure_guard", "atom_extractor", "thread_store"]


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


def guard(mesh: InProcessMesh) -> pb_grpc.ExposureGuardServiceStub:
    return pb_grpc.ExposureGuardServiceStub(mesh.channel("exposure_guard"))


def dnm(target_type: int, target: str) -> pb.Rule:
    return pb.Rule(kind=pb.RULE_KIND_DO_NOT_MENTION, target_type=target_type, target=target)


def items() -> list[pb.FilterItem]:
    return [
        pb.FilterItem(
            item_id="a1",
            key="relationship.sister",
            text="User has a sister named Sarah.",
            exposure=SPEAK,
        ),
        pb.FilterItem(
            item_id="a2", key="preference.language", text="User prefers Python.", exposure=SPEAK
        ),
        pb.FilterItem(
            item_id="a3", key="identity.health", text="User has asthma.", exposure=INTERNAL
        ),
        pb.FilterItem(
            item_id="a4", key="preference.contact", text="User's email is private.", exposure=TEXT
        ),
        pb.FilterItem(
            item_id="a5",
            key="preference.music",
            text="User loves jazz.",
            exposure=SPEAK,
            pull_only=True,
        ),
        pb.FilterItem(item_id="a6", thread_id="th-9", text="Planning the trip.", exposure=SPEAK),
        pb.FilterItem(item_id="a7", work_order_id="wo-3", text="Order flowers.", exposure=SPEAK),
    ]


async def test_set_rule_then_filter_suppresses_and_counts(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    stub = guard(mesh)
    for rule in (
        dnm(pb.TARGET_TYPE_TOPIC, "Sisters"),
        dnm(pb.TARGET_TYPE_THREAD, "th-9"),
        dnm(pb.TARGET_TYPE_WORK_ORDER, "wo-3"),
    ):
        reply = await stub.SetRule(pb.SetRuleRequest(scope=scope, rule=rule, now=NOW))
        assert reply.created
    reply = await stub.Filter(
        pb.FilterRequest(scope=scope, channel=memory_pb2.CHANNEL_VOICE, items=items())
    )
    # a4 (SAFE_TO_TEXT) goes on the voice channel to be used, not said.
    assert list(reply.allowed_item_ids) == ["a2", "a4"]
    assert list(reply.do_not_say_item_ids) == ["a4"]
    assert reply.do_not_mention_hits == 3
    hits = {(h.rule, h.target_type, h.target): h.hit_count for h in reply.hits}
    assert hits == {
        ("DO_NOT_MENTION", pb.TARGET_TYPE_TOPIC, "sisters"): 1,
        ("DO_NOT_MENTION", pb.TARGET_TYPE_THREAD, "th-9"): 1,
        ("DO_NOT_MENTION", pb.TARGET_TYPE_WORK_ORDER, "wo-3"): 1,
        ("INTERNAL_ONLY", 0, ""): 1,
        ("PULL_ONLY", 0, ""): 1,
    }
    asked = await stub.Filter(
        pb.FilterRequest(
            scope=scope, channel=memory_pb2.CHANNEL_TEXT, items=items(), user_asked=True
        )
    )
    assert list(asked.allowed_item_ids) == ["a2", "a4", "a5"]
    assert list(asked.do_not_say_item_ids) == []


async def test_rule_changes_are_on_the_ledger_as_keyed_hashes(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    stub = guard(mesh)
    await stub.SetRule(
        pb.SetRuleRequest(scope=scope, rule=dnm(pb.TARGET_TYPE_TOPIC, "Sister"), now=NOW)
    )
    again = await stub.SetRule(
        pb.SetRuleRequest(scope=scope, rule=dnm(pb.TARGET_TYPE_TOPIC, "sister"), now=NOW)
    )
    assert not again.created and again.rule.target == "sister"
    removed = await stub.RemoveRule(
        pb.RemoveRuleRequest(
            scope=scope, rule=dnm(pb.TARGET_TYPE_TOPIC, "sister"), now=NOW, reason_code="USER_UNDO"
        )
    )
    assert removed.removed
    ledger = ledger_grpc.LedgerServiceStub(mesh.channel("ledger"))
    events = [r.event async for r in ledger.Read(ledger_pb.ReadRequest(scope=scope))]
    assert [(e.event_type, e.reason_code) for e in events] == [
        ("EXPOSURE_RULE_SET", "USER_COMMAND"),
        ("EXPOSURE_RULE_REMOVED", "USER_UNDO"),
    ]
    attributes = {a.name: a.string_value for a in events[0].attributes}
    ring = await SubjectKeys(ledger).fetch(scope.tenant_id, scope.user_id)
    assert attributes == {
        "rule_kind": "DO_NOT_MENTION",
        "target_type": "TOPIC",
        "target": ring.linkable("sister"),
        "subject_key_id": ring.key_id,
    }
    stored = b"".join(e.SerializeToString() for e in events)
    assert b"sister" not in stored
    assert hashlib.sha256(b"sister").hexdigest().encode() not in stored
    assert (await stub.ListRules(pb.ListRulesRequest(scope=scope))).rules == []


async def test_rules_of_one_user_never_affect_another(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    stub = guard(mesh)
    await stub.SetRule(
        pb.SetRuleRequest(scope=scope, rule=dnm(pb.TARGET_TYPE_KEY, "relationship"), now=NOW)
    )
    other = scope_pb2.UserScope(tenant_id=scope.tenant_id, user_id=f"{scope.user_id}-other")
    reply = await stub.Filter(
        pb.FilterRequest(scope=other, channel=memory_pb2.CHANNEL_TEXT, items=items())
    )
    assert list(reply.allowed_item_ids) == ["a1", "a2", "a4", "a6", "a7"]
    assert (await stub.ListRules(pb.ListRulesRequest(scope=other))).rules == []
    mine = await stub.Filter(
        pb.FilterRequest(scope=scope, channel=memory_pb2.CHANNEL_TEXT, items=items())
    )
    assert "a1" not in mine.allowed_item_ids


async def test_unknown_user_gets_no_rules_and_a_filter_by_exposure_only(
    mesh: InProcessMesh,
) -> None:
    stub, scope = guard(mesh), new_scope()
    assert (await stub.ListRules(pb.ListRulesRequest(scope=scope))).rules == []
    reply = await stub.Filter(
        pb.FilterRequest(
            scope=scope, channel=memory_pb2.CHANNEL_VOICE, items=items(), speak_text_allowed=True
        )
    )
    assert list(reply.allowed_item_ids) == ["a1", "a2", "a4", "a6", "a7"]
    check = await stub.CheckStore(pb.CheckStoreRequest(scope=scope, key="relationship.sister"))
    assert check.allowed and not check.HasField("blocking_rule")


async def test_check_store_and_recall_summary(
    mesh: InProcessMesh, scope: scope_pb2.UserScope
) -> None:
    stub = guard(mesh)
    block = pb.Rule(
        kind=pb.RULE_KIND_DO_NOT_STORE, target_type=pb.TARGET_TYPE_TOPIC, target="health"
    )
    await stub.SetRule(pb.SetRuleRequest(scope=scope, rule=block, now=NOW))
    await stub.SetRule(
        pb.SetRuleRequest(scope=scope, rule=dnm(pb.TARGET_TYPE_KEY, "relationship.sister"), now=NOW)
    )
    check = await stub.CheckStore(
        pb.CheckStoreRequest(
            scope=scope, key="identity.condition", text="User's health is fragile."
        )
    )
    assert not check.allowed and check.blocking_rule.target == "health"
    atoms = [
        memory_pb2.Atom(
            atom_id=f"x{n}",
            key=f"preference.p{n}",
            text=f"User likes thing number {n}.",
            exposure=SPEAK,
            confidence_bp=9000 - n,
        )
        for n in range(12)
    ] + [
        memory_pb2.Atom(
            atom_id="s",
            key="relationship.sister",
            text="User has a sister.",
            exposure=SPEAK,
            pinned=True,
        ),
        memory_pb2.Atom(
            atom_id="h",
            key="identity.health",
            text="User has asthma.",
            exposure=INTERNAL,
            pinned=True,
        ),
        memory_pb2.Atom(
            atom_id="p",
            key="preference.music",
            text="User loves jazz.",
            exposure=SPEAK,
            pull_only=True,
            pinned=True,
        ),
    ]
    summary = await stub.RecallSummary(
        pb.RecallSummaryRequest(scope=scope, channel=memory_pb2.CHANNEL_VOICE, atoms=atoms)
    )
    assert list(summary.atom_ids) == ["p", *(f"x{n}" for n in range(9))]
    assert summary.omitted_count == 3
    assert len(summary.items) <= 10 and sum(len(i.encode()) for i in summary.items) <= 1024


@pytest.mark.parametrize(
    ("request_builder", "field"),
    [
        (
            lambda s: pb.SetRuleRequest(scope=s, rule=dnm(pb.TARGET_TYPE_KEY, "a b"), now=NOW),
            "rule.target",
        ),
        (
            lambda s: pb.FilterRequest(
                scope=s,
                channel=memory_pb2.CHANNEL_TEXT,
                items=[pb.FilterItem(item_id="a"), pb.FilterItem(item_id="a")],
            ),
            "items[1].item_id",
        ),
        (
            lambda s: pb.RecallSummaryRequest(
                scope=s, channel=memory_pb2.CHANNEL_TEXT, atoms=[memory_pb2.Atom(text="x")]
            ),
            "atoms[0].atom_id",
        ),
    ],
)
async def test_bad_input_is_invalid_argument_naming_the_field(
    mesh: InProcessMesh,
    scope: scope_pb2.UserScope,
    request_builder,
    field: str,  # type: ignore[no-untyped-def]
) -> None:
    stub = guard(mesh)
    request = request_builder(scope)
    call = {
        pb.SetRuleRequest: stub.SetRule,
        pb.FilterRequest: stub.Filter,
        pb.RecallSummaryRequest: stub.RecallSummary,
    }[type(request)]
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call(request)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in details_of(raised.value)[1]
