"""Composition root of the Gateway: settings -> channels and peers, database and outbox ->
use cases -> servicer -> server. The outbox drainer runs as long as the server does.

Callers authenticate with per-tenant keys; DebugUser also needs the internal token.
"""

from __future__ import annotations

import logging

from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.context_composer.v1 import context_composer_service_pb2_grpc as composer_grpc
from memmesh.engines.gateway.adapters.atom_extractor import AtomExtractorClient
from memmesh.engines.gateway.adapters.current_state import CurrentStateClient
from memmesh.engines.gateway.adapters.exposure_guard import ExposureGuardClient
from memmesh.engines.gateway.adapters.sql_store import (
    forget_legacy_extraction,
    legacy_extractions,
    open_gateway_database,
)
from memmesh.engines.gateway.adapters.thread_store import ThreadStoreClient
from memmesh.engines.gateway.asked_questions import AskedQuestions
from memmesh.engines.gateway.brief import BriefHandler
from memmesh.engines.gateway.control import ControlHandler, HeldCommands
from memmesh.engines.gateway.effects import EffectHandlers, extract_effect
from memmesh.engines.gateway.ingest import IngestHandler
from memmesh.engines.gateway.interactions import InteractionPacer
from memmesh.engines.gateway.resume import ThreadResumer
from memmesh.engines.gateway.servicer import GatewayServicer
from memmesh.engines.gateway.settings import GatewaySettings
from memmesh.engines.gateway.vocabulary import VocabularyPackHandler
from memmesh.engines.gateway.work_orders import WorkOrderHandler, WorkOrderOffers
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from memmesh.outbox import Outbox, RetryPolicy
from memmesh.quality.measurement import open_measurement_log
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.engine import BuiltEngine, run_engine
from memmesh.runtime.interceptors import TenantKeyAuthenticator
from memmesh.runtime.server import ServiceRegistration
from memmesh.runtime.settings import MeshSettings
from memmesh.runtime.timeconv import timestamp_of
from memmesh.storage.cache import open_cache
from memmesh.storage.sql import Database

log = logging.getLogger("memmesh.gateway")
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["GatewayService"].full_name
# Operator methods: the internal token is needed beside the tenant key.
DEBUG_METHODS = {f"/{SERVICE_NAME}/DebugUser", f"/{SERVICE_NAME}/PutVocabularyPack"}
ENGINES = ("context_composer", "exposure_guard", "thread_store", "current_state", "atom_extractor")


def retry_policy(gateway: GatewaySettings) -> RetryPolicy:
    """The outbox's attempt deadline, backoff and cap from the gateway's settings."""
    return RetryPolicy(
        attempt_timeout_s=gateway.effect_attempt_ms / 1000,
        initial_backoff_s=gateway.retry_initial_s,
        max_backoff_s=gateway.retry_max_s,
        max_attempts=gateway.effect_max_attempts,
    )


async def adopt_legacy_extractions(database: Database, outbox: Outbox) -> None:
    """Move turns the retired pending-extraction queue still holds into the outbox."""
    for item in await legacy_extractions(database):
        scope = scope_pb2.UserScope(tenant_id=item.tenant_id, user_id=item.user_id)
        turn = memory_pb2.Turn(
            turn_id=item.turn_id,
            session_id=item.session_id,
            text=item.text,
            time=timestamp_of(item.time_us),
        )
        await outbox.enqueue(item.tenant_id, item.user_id, [extract_effect(scope, turn)])
        await forget_legacy_extraction(database, item)
        log.info("queued extraction moved to the outbox")


async def build(settings: MeshSettings, gateway: GatewaySettings | None = None) -> BuiltEngine:
    """Wire the gateway from settings."""
    gateway = gateway or GatewaySettings()
    channels = {
        name: engine_channel(
            settings.addr_of(name), settings.internal_token, settings.default_call_timeout_s
        )
        for name in ENGINES
    }
    threads = ThreadStoreClient(channels["thread_store"])
    state = CurrentStateClient(channels["current_state"])
    extractor = AtomExtractorClient(channels["atom_extractor"])
    database = await open_gateway_database(settings.storage_url, settings.data_dir)
    # The handlers reach the outbox that delivers them: a spoken forget drops its queued copies.
    handlers = EffectHandlers(state, extractor, lambda: outbox, threads)
    outbox = Outbox(database, handlers.by_kind(), retry_policy(gateway))
    await adopt_legacy_extractions(database, outbox)
    outbox.start()
    cache = open_cache(settings.redis_url)
    composer = composer_grpc.ContextComposerServiceStub(channels["context_composer"])
    guard = guard_grpc.ExposureGuardServiceStub(channels["exposure_guard"])
    rules = ExposureGuardClient(channels["exposure_guard"])
    # Privacy commands acknowledged with effects still queued, settled by the next Brief.
    held = HeldCommands(extractor, rules, outbox)
    # "Resume the thread about ...": the session's next Brief carries the thread.
    resumer = ThreadResumer(threads, cache)
    # The work order each session was offered: "cancel that" and "forget that" act on it.
    offers = WorkOrderOffers(cache)
    work_orders = WorkOrderHandler(state, gateway.control_budget_ms / 1000, offers)
    measurement = open_measurement_log(gateway.measurement_log, settings.data_dir)
    servicer = GatewayServicer(
        BriefHandler(composer, guard, AskedQuestions(cache), gateway.brief_budget_ms / 1000, gateway.brief_concurrency, held, resumer=resumer, offers=offers),
        IngestHandler(threads, outbox, gateway.ingest_budget_ms / 1000, held, resumer=resumer, work_orders=work_orders, interactions=InteractionPacer(gateway.interaction_refresh_s)),
        ControlHandler(threads, state, extractor, rules, outbox, gateway.control_budget_ms / 1000, held, resumer, work_orders),
        VocabularyPackHandler(extractor, gateway.control_budget_ms / 1000),
        work_orders,
        measurement,
    )  # fmt: skip

    async def close() -> None:
        await outbox.stop()
        for channel in channels.values():
            await channel.close()
        await cache.close()
        await database.close()
        measurement.close()

    return BuiltEngine(
        registrations=[
            ServiceRegistration(
                servicer, pb_grpc.add_GatewayServiceServicer_to_server, SERVICE_NAME
            )
        ],
        authenticator=TenantKeyAuthenticator(
            gateway.tenant_keys, settings.internal_token, DEBUG_METHODS
        ),
        close=close,
    )


def main() -> None:
    run_engine("gateway", build)
