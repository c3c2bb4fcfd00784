"""Composition root of the ContextComposer: channels to the engines it reads -> use case -> server.

The composer holds nothing durable: no store, only channels.
"""

from __future__ import annotations

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.context_composer.v1 import context_composer_service_pb2 as pb
from memmesh.context_composer.v1 import context_composer_service_pb2_grpc as pb_grpc
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.engines.context_composer import mapping
from memmesh.engines.context_composer.adapters.atom_extractor import GrpcCorrections
from memmesh.engines.context_composer.adapters.current_state import GrpcStateSource
from memmesh.engines.context_composer.adapters.exposure_guard import GrpcGuard
from memmesh.engines.context_composer.adapters.retrieval_ranker import GrpcRanker
from memmesh.engines.context_composer.adapters.thread_store import GrpcThreads
from memmesh.engines.context_composer.servicer import ContextComposerServicer
from memmesh.engines.context_composer.use_cases import Composer
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as ranker_grpc
from memmesh.runtime.channels import engine_channel
from memmesh.runtime.engine import BuiltEngine, run_engine
from memmesh.runtime.server import ServiceRegistration
from memmesh.runtime.settings import MeshSettings
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["ContextComposerService"].full_name


async def build(settings: MeshSettings) -> BuiltEngine:
    """Wire the composer from settings."""
    channels = {
        name: engine_channel(
            settings.addr_of(name), settings.internal_token, settings.default_call_timeout_s
        )
        for name in (
            "current_state",
            "retrieval_ranker",
            "thread_store",
            "exposure_guard",
            "atom_extractor",
        )
    }
    # The composer measures each bundle by encoding it; the servicer answers that encoding.
    encoder = mapping.BundleEncoder()
    composer = Composer(
        state=GrpcStateSource(state_grpc.CurrentStateServiceStub(channels["current_state"])),
        ranker=GrpcRanker(
            ranker_grpc.RetrievalRankerServiceStub(channels["retrieval_ranker"]),
            settings.default_call_timeout_s,
        ),
        threads=GrpcThreads(
            thread_grpc.ThreadStoreServiceStub(channels["thread_store"]),
            settings.default_call_timeout_s,
        ),
        guard=GrpcGuard(guard_grpc.ExposureGuardServiceStub(channels["exposure_guard"])),
        corrections=GrpcCorrections(
            extractor_grpc.AtomExtractorServiceStub(channels["atom_extractor"]),
            settings.default_call_timeout_s,
        ),
        measure=encoder,
    )

    async def close() -> None:
        for channel in channels.values():
            await channel.close()

    return BuiltEngine(
        registrations=[
            ServiceRegistration(
                ContextComposerServicer(composer, encoder),
                pb_grpc.add_ContextComposerServiceServicer_to_server,
                SERVICE_NAME,
            )
        ],
        close=close,
    )


def main() -> None:
    run_engine("context_composer", build)
