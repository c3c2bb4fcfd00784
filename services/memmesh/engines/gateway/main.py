"""Composition root of the Gateway: settings -> channels, retry queue -> handlers -> server.

Callers authenticate with per-tenant keys; DebugUser also needs the internal token.
"""

from __future__ import annotations

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.context_composer.v1 import context_composer_service_pb2_grpc as composer_grpc
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.engines.gateway.asked_questions import AskedQuestions
from memmesh.engines.gateway.brief import BriefHandler
from memmesh.engines.gateway.control import ControlHandler
from memmesh.engines.gateway.extraction_retry import ExtractionRetrier
from memmesh.engines.gateway.ingest import IngestHandler, process_request
from memmesh.engines.gateway.profile import adopt_stated_profile
from memmesh.engines.gateway.servicer import GatewayServicer
from memmesh.engines.gateway.settings import GatewaySettings
from memmesh.engines.gateway.store import PendingExtraction, open_pending_store
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.engine import BuiltEngine, run_engine
from memmesh.runtime.interceptors import TenantKeyAuthenticator
from memmesh.runtime.server import ServiceRegistration
from memmesh.runtime.settings import MeshSettings
from memmesh.storage.cache import open_cache
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["GatewayService"].full_name
DEBUG_METHODS = {f"/{SERVICE_NAME}/DebugUser"}
ENGINES = ("context_composer", "exposure_guard", "thread_store", "current_state", "retrieval_ranker", "atom_extractor")


async def build(settings: MeshSettings, gateway: GatewaySettings | None = None) -> BuiltEngine:
    """Wire the gateway from settings."""
    gateway = gateway or GatewaySettings()
    channels = {
        name: engine_channel(settings.addr_of(name), settings.internal_token, settings.default_call_timeout_s) for name in ENGINES
    }
    composer = composer_grpc.ContextComposerServiceStub(channels["context_composer"])
    guard = guard_grpc.ExposureGuardServiceStub(channels["exposure_guard"])
    threads = thread_grpc.ThreadStoreServiceStub(channels["thread_store"])
    state = state_grpc.CurrentStateServiceStub(channels["current_state"])
    ranker = ranker_grpc.RetrievalRankerServiceStub(channels["retrieval_ranker"])
    extractor = extractor_grpc.AtomExtractorServiceStub(channels["atom_extractor"])
    pending = await open_pending_store(settings)
    cache = open_cache(settings.redis_url)
    attempt_s = gateway.extraction_attempt_ms / 1000

    async def process(item: PendingExtraction) -> object:
        request = process_request(item)
        processed = await extractor.Process(request, timeout=attempt_s)
        await adopt_stated_profile(state, request.scope, request.turn, processed, attempt_s)
        return processed

    retrier = ExtractionRetrier(pending, process, gateway.retry_initial_s, gateway.retry_max_s)
    retrier.start()
    servicer = GatewayServicer(
        BriefHandler(composer, guard, AskedQuestions(cache), gateway.brief_budget_ms / 1000, gateway.brief_concurrency),
        IngestHandler(threads, state, ranker, extractor, pending, retrier, gateway.ingest_budget_ms / 1000, attempt_s),
        ControlHandler(threads, state, ranker, extractor, guard, pending, gateway.control_budget_ms / 1000),
    )

    async def close() -> None:
        await retrier.stop()
        for channel in channels.values():
            await channel.close()
        await cache.close()
        await pending.close()

    return BuiltEngine(
        registrations=[ServiceRegistration(servicer, pb_grpc.add_GatewayServiceServicer_to_server, SERVICE_NAME)],
        authenticator=TenantKeyAuthenticator(gateway.tenant_keys, settings.internal_token, DEBUG_METHODS),
        close=close,
    )


def main() -> None:
    run_engine("gateway", build)
