"""Episode digests through the gateway: CloseSession indexes them, a Brief pages them in
with their thread named, and a DO_NOT_MENTION rule on the thread holds every one back."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import scope_pb2
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.runtime.timeconv import timestamp_of
from memmesh.testing.in_process import start_in_process

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
NOW_US = 1_767_225_600 * 1_000_000
SECRET = [
    "The surprise party for Lucia is at the lighthouse on Friday.",
    "A lighthouse party for Lucia, who brings the cake?",
    "Her brother Mateo brings the cake and blue balloons to the lighthouse.",
    "Mateo with blue balloons at the lighthouse party, lovely.",
    "The lighthouse keeper lends us chairs for the party.",
    "Chairs from the lighthouse keeper for the party then.",
    "I renewed my passport at the embassy in Madrid as well.",
    "The Madrid embassy passport renewal is done.",
]
OTHER = [
    "We toured the lighthouse with my cousin Ines and watched the party boats.",
    "Ines loved the lighthouse tour and the party boats.",
]


async def test_episodes_are_paged_in_and_a_thread_rule_holds_them_all_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Behaviour, not latency: on a loaded machine a Brief out of the default budget fails
    # closed (BUDGET_EXCEEDED, seen in CI) before the digests could be judged.
    monkeypatch.setenv("MEMMESH_GATEWAY_BRIEF_BUDGET_MS", "5000")
    mesh = await start_in_process(ENGINES, tmp_path, default_call_timeout_s=10.0)
    user_id = f"u-{uuid.uuid4().hex[:10]}"
    try:
        async with GatewayClient(mesh.settings.addr_of("gateway"), "demo-key") as gateway:
            for session_id, texts, start_us in (
                ("secret", SECRET, NOW_US),
                ("other", OTHER, NOW_US + 3_600_000_000),
            ):
                for index, text in enumerate(texts):
                    role = "user" if index % 2 == 0 else "assistant"
                    await gateway.ingest(
                        user_id,
                        session_id,
                        f"{session_id}-t{index}",
                        role,
                        text,
                        start_us + index * 30_000_000,
                    )
                closed = await gateway.close_session(user_id, session_id, start_us + 600_000_000)
                assert closed.digest_summary
            later = NOW_US + 7 * 3_600_000_000

            async def digests() -> list[tuple[str, str]]:
                response = await gateway.brief(
                    user_id,
                    "later",
                    later,
                    "the lighthouse party with balloons",
                    mode="in_session",
                    timeout=10,
                )
                assert not response.degraded, response.reason_code
                return [(d.digest_id, d.thread_id) for d in response.bundle.digests]

            before = await digests()
            episodes = [(d, t) for d, t in before if d.startswith("secret#e")]
            assert episodes and all(thread == "secret" for _, thread in episodes)
            assert any(d.startswith("other#e") for d, _ in before)

            guard = guard_grpc.ExposureGuardServiceStub(mesh.channel("exposure_guard"))
            rule = guard_pb.Rule(
                kind=guard_pb.RULE_KIND_DO_NOT_MENTION,
                target_type=guard_pb.TARGET_TYPE_THREAD,
                target="secret",
            )
            scope = scope_pb2.UserScope(tenant_id=gateway.tenant_id, user_id=user_id)
            await guard.SetRule(
                guard_pb.SetRuleRequest(scope=scope, rule=rule, now=timestamp_of(later))
            )

            after = await digests()
            assert not [
                d for d, t in after if t == "secret" or d == "secret" or d.startswith("secret#")
            ]
            assert any(d.startswith("other#e") for d, _ in after)
    finally:
        await mesh.stop()
