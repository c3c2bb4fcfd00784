"""Gateway policies without a network: tenant-key auth, budget arithmetic and the retry
backoff (the Brief's reason codes and final gate: test_gateway_brief_gate.py)."""

from __future__ import annotations

import pytest

from memmesh.engines.gateway.budget import TurnBudget
from memmesh.engines.gateway.main import DEBUG_METHODS, retry_policy
from memmesh.engines.gateway.settings import GatewaySettings
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.runtime.errors import PermissionDenied, Unauthenticated
from memmesh.runtime.interceptors import INTERNAL_TOKEN_HEADER, TenantKeyAuthenticator

BRIEF = "/memmesh.gateway.v1.GatewayService/Brief"
DEBUG = next(iter(DEBUG_METHODS))


def authenticator() -> TenantKeyAuthenticator:
    return TenantKeyAuthenticator(
        {"acme": "acme-key", "globex": "globex-key"}, "internal", DEBUG_METHODS
    )


def request(tenant: str) -> pb.BriefRequest:
    return pb.BriefRequest(scope={"tenant_id": tenant, "user_id": "u1"})


def test_default_settings_serve_the_demo_tenant_and_parse_json_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
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
    authenticator().authenticate(
        DEBUG,
        {"authorization": "Bearer acme-key", INTERNAL_TOKEN_HEADER: "internal"},
        debug_request,
    )


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


def test_retry_backoff_doubles_and_is_capped() -> None:
    policy = retry_policy(GatewaySettings(retry_initial_s=0.2, retry_max_s=1.0))
    assert [policy.backoff_s(n) for n in (1, 2, 3, 4, 5)] == [0.2, 0.4, 0.8, 1.0, 1.0]
