"""gRPC adapter of the composer: proto in, one use-case call, proto out."""

from __future__ import annotations

import grpc

from memmesh.context_composer.v1 import context_composer_service_pb2 as pb
from memmesh.context_composer.v1 import context_composer_service_pb2_grpc as pb_grpc
from memmesh.engines.context_composer import mapping
from memmesh.engines.context_composer.use_cases import Composer


class ContextComposerServicer(pb_grpc.ContextComposerServiceServicer):
    def __init__(self, composer: Composer, encoder: mapping.BundleEncoder | None = None) -> None:
        self._composer = composer
        self._encoder = encoder

    async def Compose(
        self, request: pb.ComposeRequest, context: grpc.aio.ServicerContext
    ) -> pb.ComposeResponse:
        composed = await self._composer.compose(mapping.compose_query(request))
        return mapping.compose_response(composed, self._encoder)
