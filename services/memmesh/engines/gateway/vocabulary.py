"""Operator uploads of a company vocabulary pack (seed 001 §2.4.2), passed to the engine that
owns the learning stores; its refusal (the entry named) goes back to the operator as it is."""

from __future__ import annotations

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.engines.gateway.adapters.atom_extractor import AtomExtractorClient
from memmesh.engines.gateway.budget import TurnBudget
from memmesh.gateway.v1 import gateway_service_pb2 as pb


class VocabularyPackHandler:
    def __init__(self, extractor: AtomExtractorClient, budget_s: float) -> None:
        self._extractor = extractor
        self._budget_s = budget_s

    async def put(
        self, request: pb.PutVocabularyPackRequest, inbound: float | None
    ) -> pb.PutVocabularyPackResponse:
        budget = TurnBudget(self._budget_s, inbound)
        stored = await self._extractor.put_vocabulary_pack(
            extractor_pb.PutVocabularyPackRequest(
                scope=request.scope, entries=request.entries, reason=request.reason, now=request.now
            ),
            budget.remaining_s(),
        )
        return pb.PutVocabularyPackResponse(
            version=stored.version, sha256=stored.sha256, unchanged=stored.unchanged
        )
