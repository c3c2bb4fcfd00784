"""The AtomExtractor as the composer's Corrections and learned hints (Tier 2: the hint bundle
goes without them)."""

from __future__ import annotations

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as extractor_grpc
from memmesh.engines.context_composer import mapping
from memmesh.engines.context_composer.adapters.calls import scope_of, tier2_timeout
from memmesh.engines.context_composer.domain.model import SpeechHints
from memmesh.runtime.errors import call_engine

# The hint bundle carries at most this many pairs.
CORRECTIONS_LIMIT = 20


class GrpcCorrections:
    def __init__(
        self, stub: extractor_grpc.AtomExtractorServiceStub, default_timeout_s: float
    ) -> None:
        self._stub = stub
        self._default_timeout_s = default_timeout_s

    async def corrections(self, tenant_id: str, user_id: str) -> SpeechHints:
        # The gateway composes only for a verified voice, so the voice-locked learning capsule
        # may ride along in this answer (no extra call on the Brief's path).
        request = extractor_pb.ListCorrectionsRequest(
            scope=scope_of(tenant_id, user_id), limit=CORRECTIONS_LIMIT, identity_verified=True
        )
        call = self._stub.ListCorrections(request, timeout=tier2_timeout(self._default_timeout_s))
        reply = await call_engine("atom_extractor", call)
        pairs = [record.correction for record in reply.corrections] + list(reply.learning.pairs)
        return SpeechHints(mapping.corrections_of(pairs), tuple(reply.learning.vocabulary))
