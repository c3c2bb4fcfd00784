"""Replays a labelled fixture through the gateway of a real mesh, one step at a time.

Each user turn and command is followed by a wait until the user's queued effects (the
gateway's and the AtomExtractor's outboxes) are delivered, so every Brief sees the same
stored state on every run, however loaded the machine is.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import bundle_pb2
from memmesh.gateway.v1 import gateway_service_pb2 as gateway_pb
from memmesh.quality.fixtures import EPOCH_US, Fixture, Step
from memmesh.quality.metrics import BriefObservation
from memmesh.runtime.settings import MeshSettings
from memmesh.runtime.supervisor import Mesh

TENANT, TENANT_KEY = "quality", "quality-eval-key"
MEASUREMENT_LOG = "measurement.jsonl"
PER_TURN_ENGINES = [
    "ledger",
    "current_state",
    "exposure_guard",
    "retrieval_ranker",
    "thread_store",
    "atom_extractor",
    "context_composer",
    "gateway",
]
# Quality, not latency, is measured: budgets a loaded machine cannot overrun, so a slow turn
# is never an (expected) empty bundle or a queued extraction.
SETTLE_TIMEOUT_S = 20.0


def mesh_environment(data_dir: Path, measurement: bool = True) -> dict[str, str]:
    """The engines' environment: embedded storage, one tenant, generous budgets."""
    return {
        "MEMMESH_DATA_DIR": str(data_dir),
        "MEMMESH_STORAGE_URL": "sqlite",
        "MEMMESH_GATEWAY_TENANT_KEYS": f'{{"{TENANT}": "{TENANT_KEY}"}}',
        "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": "5000",
        "MEMMESH_GATEWAY_EFFECT_ATTEMPT_MS": "10000",
        "MEMMESH_GATEWAY_RETRY_INITIAL_S": "0.05",
        "MEMMESH_GATEWAY_RETRY_MAX_S": "0.2",
        "MEMMESH_THREAD_STORE_INDEX_FIRST_ATTEMPT_MS": "10000",
        "MEMMESH_GATEWAY_MEASUREMENT_LOG": MEASUREMENT_LOG if measurement else "",
        "MEMMESH_LOG_LEVEL": "WARNING",
    }


@contextmanager
def quality_mesh(data_dir: Path, measurement: bool = True) -> Iterator[Mesh]:
    """The per-turn engines as real processes on loopback over one data directory."""
    with Mesh(list(PER_TURN_ENGINES), env=mesh_environment(data_dir, measurement)) as mesh:
        yield mesh


@dataclass
class Replay:
    """What one replay of a fixture produced: every Brief's response and client latency."""

    fixture: Fixture
    user_id: str
    responses: dict[int, gateway_pb.BriefResponse] = field(default_factory=dict)
    latencies_s: list[float] = field(default_factory=list)

    def observations(self) -> list[BriefObservation]:
        """The Briefs as the metrics read them."""
        return [observe(step, response) for step, response in sorted(self.responses.items())]


def _turn_texts(turns: object) -> list[str]:
    return [turn.text for turn in turns]  # type: ignore[attr-defined]


def carried_texts(bundle: bundle_pb2.ContextBundle) -> tuple[str, ...]:
    """Every text a bundle carries, part by part in a fixed order."""
    push = bundle.push
    texts = [push.display_name, push.primary_language, push.contact_preference, push.timezone]
    texts += list(push.active_project_ids)
    texts += _turn_texts(bundle.working_memory)
    texts += [bundle.rolling_summary, bundle.episode_bridge]
    texts += [loop.text for loop in bundle.active_loops]
    texts += [atom.text for atom in bundle.atoms]
    texts += _turn_texts(bundle.excerpts)
    texts += [f"{d.title} {d.summary}" for d in bundle.digests]
    texts += [f"{e.label} {e.related_label}" for e in bundle.entities]
    return tuple(text for text in texts if text)


def observe(step: int, response: gateway_pb.BriefResponse) -> BriefObservation:
    """A Brief's retrieved items (atoms, then excerpts), carried texts and question."""
    bundle = response.bundle
    question = ""
    if bundle.HasField("clarification"):
        question = f"{bundle.clarification.key.replace('.', ' ')} {bundle.clarification.text}"
    return BriefObservation(
        step=step,
        retrieved=tuple([a.text for a in bundle.atoms] + _turn_texts(bundle.excerpts)),
        carried=carried_texts(bundle),
        question=question,
    )


async def settle(debug: GatewayClient, user_id: str) -> None:
    """Wait until nothing of the user's is queued in the gateway's or the extractor's outbox."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while True:
        effects = (await debug.debug_user(user_id)).effects
        if not any("pending:" in e or "UNAVAILABLE" in e for e in effects):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"effects still queued: {list(effects)}")
        await asyncio.sleep(0.05)


async def replay(mesh: Mesh, fixture: Fixture, user_id: str) -> Replay:
    """Play every step of the fixture as `user_id` through the mesh's gateway."""
    addr = mesh.addrs["gateway"]
    token = MeshSettings().internal_token
    result = Replay(fixture, user_id)
    async with (
        GatewayClient(addr, TENANT_KEY, tenant_id=TENANT) as gateway,
        GatewayClient(addr, TENANT_KEY, tenant_id=TENANT, internal_token=token) as debug,
    ):
        for step in fixture.steps:
            await _play(gateway, step, result)
            if step.kind != "brief":
                await settle(debug, user_id)
    return result


async def _play(gateway: GatewayClient, step: Step, result: Replay) -> None:
    now_us = EPOCH_US + step.time_us
    match step.kind:
        case "say" | "assistant":
            role = "user" if step.kind == "say" else "assistant"
            turn_id = f"t{step.index}"
            reply = await gateway.ingest(
                result.user_id, step.session_id, turn_id, role, step.text, now_us
            )
            if not reply.ok:
                raise RuntimeError(f"step {step.index}: the turn was not archived")
        case "command":
            await gateway.command(result.user_id, step.session_id, step.text, now_us, step.target)
        case "brief":
            started = time.perf_counter()
            response = await gateway.brief(
                result.user_id, step.session_id, now_us, step.text, timeout=10.0, **step.options
            )
            result.latencies_s.append(time.perf_counter() - started)
            # A degraded Brief would score what the budget left, not what memory holds.
            if response.degraded:
                raise RuntimeError(f"step {step.index}: Brief degraded ({response.reason_code})")
            result.responses[step.index] = response
