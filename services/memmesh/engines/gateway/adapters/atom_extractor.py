"""AtomExtractor, as the gateway calls it (every call through call_engine)."""

from __future__ import annotations

import grpc

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.runtime.errors import call_engine

ENGINE = "atom_extractor"


class AtomExtractorClient:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._stub = extractor_grpc.AtomExtractorServiceStub(channel)

    async def process(
        self, request: extractor_pb.ProcessRequest, timeout_s: float
    ) -> extractor_pb.ProcessResponse:
        return await call_engine(ENGINE, self._stub.Process(request, timeout=timeout_s))

    async def run_command(
        self, request: extractor_pb.RunCommandRequest, timeout_s: float
    ) -> extractor_pb.RunCommandResponse:
        return await call_engine(ENGINE, self._stub.RunCommand(request, timeout=timeout_s))

    async def list_atoms(
        self, request: extractor_pb.ListAtomsRequest, timeout_s: float
    ) -> extractor_pb.ListAtomsResponse:
        return await call_engine(ENGINE, self._stub.ListAtoms(request, timeout=timeout_s))

    async def list_effects(
        self, request: extractor_pb.ListEffectsRequest, timeout_s: float
    ) -> extractor_pb.ListEffectsResponse:
        return await call_engine(ENGINE, self._stub.ListEffects(request, timeout=timeout_s))

    async def put_vocabulary_pack(
        self, request: extractor_pb.PutVocabularyPackRequest, timeout_s: float
    ) -> extractor_pb.PutVocabularyPackResponse:
        return await call_engine(ENGINE, self._stub.PutVocabularyPack(request, timeout=timeout_s))
