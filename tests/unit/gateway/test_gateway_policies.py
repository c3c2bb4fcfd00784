"""Gateway policies without a network: tenant-key auth, budget arithmetic, fail-closed
reason codes, the final gate and the retry backoff."""

from __future__ import annotations

import grpc
import pytest

from memmesh.common.v1 import bundle_pb2, memory_pb2
from memmesh.engines.gateway.budget import TurnBudget
from memmesh.engines.gateway.final_gate import apply_gate, gate_items, prune_vocabulary, recount
from memmesh.engines.gateway.main import DEBUG_METHODS, retry_policy
from memmesh.engines.gateway.outcomes import BUDGET_EXCEEDED, failure_reason
from memmesh.engines.gateway.settings import GatewaySettings
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.runtime.errors import PermissionDenied, Unauthenticated
from memmesh.runtime.interceptors import INTERNAL_TOKEN_HEADER, TenantKeyAuthenticator

BRIEF = "/memmesh.gateway.v1.GatewayService/Brief"
DEBUG = next(iter(DEBUG_METHODS))


def authenticator() -> TenantKeyAuthenticator:
    return TenantKeyAuthenticator({"acme": "acme-key", "globex": "globex-key"}, "internal", DEBUG_METHODS)


def request(tenant: str) -> pb.BriefRequest:
    return pb.BriefRequest(scope={"tenant_id": tenant, "user_id": "u1"})


def test_default_settings_serve_the_demo_tenant_and_parse_json_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    assert GatewaySettings().tenant_keys == {"demo": "demo-key"}
    assert GatewaySettings().brief_budget_ms == 40
    monkeypatch.setenv("MEMMESH_GATEWAY_TENANT_KEYS", '{"acme": "k1"}')
    monkeypatch.setenv("MEMMESH_GATEWAY_BRIEF_BUDGET_MS", "25")
    settings = GatewaySettings()
    assert settings.tenant_keys == {"acme": "k1"} and settings.brief_budget_ms == 25


def test_a_tenant_key_admits_its_own_tenant() -> None:
    authenticator().authenticate(BRIEF, {"authorization": "Bearer acme-key"}, request("acme"))


def test_a_key_used_for_another_tenant_is_permission_denied() -> None:
    with pytest.raises(PermissionDenied):
        authenticator().authenticate(BRIEF, {"authorization": "Bearer acme-key"}, request("globex"))


@pytest.mark.parametrize("header", ["", "Bearer ", "Bearer nope", "acme"])
def test_a_missing_or_unknown_key_is_unauthenticated(header: str) -> None:
    with pytest.raises(Unauthenticated):
        authenticator().authenticate(BRIEF, {"authorization": header}, request("acme"))


def test_debug_user_also_needs_the_internal_token() -> None:
    debug_request = pb.DebugUserRequest(scope={"tenant_id": "acme", "user_id": "u1"})
    with pytest.raises(Unauthenticated):
        authenticator().authenticate(DEBUG, {"authorization": "Bearer acme-key"}, debug_request)
    authenticator().authenticate(DEBUG, {"authorization": "Bearer acme-key", INTERNAL_TOKEN_HEADER: "internal"}, debug_request)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_budget_counts_down_and_never_goes_negative() -> None:
    clock = FakeClock()
    budget = TurnBudget(0.040, None, clock)
    clock.now += 0.015
    assert budget.remaining_s() == pytest.approx(0.025)
    assert not budget.expired
    clock.now += 0.030
    assert budget.remaining_s() == 0.0 and budget.expired


def test_a_shorter_inbound_deadline_wins_over_the_budget() -> None:
    clock = FakeClock()
    assert TurnBudget(0.040, 0.010, clock).remaining_s() == pytest.approx(0.010)
    assert TurnBudget(0.040, 5.0, clock).remaining_s() == pytest.approx(0.040)
    assert TurnBudget(0.040, -1.0, clock).expired


@pytest.mark.parametrize(
    ("engine", "code", "details", "reason"),
    [
        ("context_composer", grpc.StatusCode.DEADLINE_EXCEEDED, "", BUDGET_EXCEEDED),
        ("exposure_guard", grpc.StatusCode.UNAVAILABLE, "", "TIER1_UNAVAILABLE:exposure_guard"),
        ("context_composer", grpc.StatusCode.UNAVAILABLE, "tier1 retrieval_ranker: unavailable UNAVAILABLE", "TIER1_UNAVAILABLE:retrieval_ranker"),
        ("context_composer", grpc.StatusCode.UNAVAILABLE, "connection refused", "TIER1_UNAVAILABLE:context_composer"),
        ("thread_store", grpc.StatusCode.INTERNAL, "tier1 current_state:", "TIER1_UNAVAILABLE:thread_store"),
    ],
)
def test_failures_map_to_reason_codes(engine: str, code: grpc.StatusCode, details: str, reason: str) -> None:
    assert failure_reason(engine, code, details) == reason


def sample_bundle() -> bundle_pb2.ContextBundle:
    bundle = bundle_pb2.ContextBundle(
        push=bundle_pb2.PushMemory(display_name="Sam"),
        atoms=[
            bundle_pb2.BundleAtom(atom_id="a1", key="relationship.sister", text="User's sister is Ana", tag=memory_pb2.MEMORY_TAG_TENTATIVE, exposure=memory_pb2.EXPOSURE_SAFE_TO_SPEAK),
            bundle_pb2.BundleAtom(atom_id="a2", key="preference.music", text="User likes jazz", tag=memory_pb2.MEMORY_TAG_CONFIRMED, exposure=memory_pb2.EXPOSURE_SAFE_TO_SPEAK),
        ],
        working_memory=[bundle_pb2.BundleTurn(turn_id="t1", session_id="s", text="hello")],
        rolling_summary="We spoke about Ana.",
        clarification=bundle_pb2.ClarificationQuestion(question_id="q1", atom_id="a1", key="relationship.sister", text="Is Ana your sister?", reason_code="LOW_CONFIDENCE"),
    )
    return bundle


def test_final_gate_removes_what_the_guard_holds_back_and_recounts() -> None:
    bundle = sample_bundle()
    items = gate_items(bundle)
    assert {i.item_id for i in items} == {"a0", "a1", "w0", "s", "n", "q"}
    allowed = {"a1", "w0", "n"}
    gated = apply_gate(bundle, items, allowed)
    assert [a.atom_id for a in gated.bundle.atoms] == ["a2"]
    assert not gated.bundle.HasField("clarification")
    assert gated.bundle.rolling_summary == ""
    counters = recount(bundle_pb2.BundleCounters(do_not_mention_hits_count=2), gated.bundle, 3)
    assert (counters.atoms_selected_count, counters.confirmed_count, counters.clarification_due_to_memory_count) == (1, 1, 0)
    assert counters.do_not_mention_hits_count == 5
    assert counters.context_bundle_bytes == gated.bundle.ByteSize()
    hints = prune_vocabulary(bundle_pb2.HintBundle(vocabulary=["Ana", "Sam"]), gated.removed_texts)
    assert list(hints.vocabulary) == ["Sam"]


def test_final_gate_passing_everything_returns_the_bundle_unchanged() -> None:
    bundle = sample_bundle()
    items = gate_items(bundle)
    gated = apply_gate(bundle, items, {i.item_id for i in items})
    assert gated.bundle is bundle and gated.removed_texts == ()


def test_retry_backoff_doubles_and_is_capped() -> None:
    policy = retry_policy(GatewaySettings(retry_initial_s=0.2, retry_max_s=1.0))
    assert [policy.backoff_s(n) for n in (1, 2, 3, 4, 5)] == [0.2, 0.4, 0.8, 1.0, 1.0]
