"""The learning RPCs of the AtomExtractor's servicer (proto in, one use-case call, proto
out), and the learning side effects of a processed turn or command."""

from __future__ import annotations

import grpc

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.device.learning_packages import PackageAction
from memmesh.engines.atom_extractor.learning import mapping
from memmesh.engines.atom_extractor.learning.service import LearningService
from memmesh.runtime.timeconv import micros_of

SIGNALS_PAGE = 100


class LearningRpcs:
    """Mixed into AtomExtractorServicer."""

    _learning: LearningService

    async def GetLearningProfile(
        self, request: pb.GetLearningProfileRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetLearningProfileResponse:
        if not request.identity_verified:
            return pb.GetLearningProfileResponse(served=False)
        tenant_id, user_id = request.scope.tenant_id, request.scope.user_id
        profile = await self._learning.profile(tenant_id, user_id)
        opted_in = await self._learning.opted_in(tenant_id, user_id)
        return mapping.profile_message(profile, opted_in)

    async def PutVocabularyPack(
        self, request: pb.PutVocabularyPackRequest, context: grpc.aio.ServicerContext
    ) -> pb.PutVocabularyPackResponse:
        version, sha256, unchanged = await self._learning.put_pack(
            request.scope.tenant_id,
            request.scope.user_id,
            mapping.entries_of(request.entries),
            request.reason.strip(),
            micros_of(request.now),
        )
        return pb.PutVocabularyPackResponse(version=version, sha256=sha256, unchanged=unchanged)

    async def ListVocabularyPacks(
        self, request: pb.ListVocabularyPacksRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListVocabularyPacksResponse:
        versions = await self._learning.pack_versions(request.scope.tenant_id)
        return pb.ListVocabularyPacksResponse(
            versions=[mapping.pack_version_message(v) for v in versions]
        )

    async def SetLearningConsent(
        self, request: pb.SetLearningConsentRequest, context: grpc.aio.ServicerContext
    ) -> pb.SetLearningConsentResponse:
        await self._learning.set_consent(
            request.scope.tenant_id,
            request.scope.user_id,
            request.global_signals_opt_in,
            micros_of(request.now),
        )
        return pb.SetLearningConsentResponse(global_signals_opt_in=request.global_signals_opt_in)

    async def ReleaseGlobalSignals(
        self, request: pb.ReleaseGlobalSignalsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ReleaseGlobalSignalsResponse:
        released = await self._learning.release_signals(request.limit or SIGNALS_PAGE)
        return pb.ReleaseGlobalSignalsResponse(
            signals=[mapping.signal_message(r) for r in released],
            k_threshold=self._learning.k_threshold,
        )

    async def BuildLearningPackage(
        self, request: pb.BuildLearningPackageRequest, context: grpc.aio.ServicerContext
    ) -> pb.BuildLearningPackageResponse:
        package = await self._learning.build_package(
            request.scope.tenant_id, request.scope.user_id, request.identity_verified
        )
        return pb.BuildLearningPackageResponse(package=mapping.package_message(package))

    async def GetPackageSigningKey(
        self, request: pb.GetPackageSigningKeyRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetPackageSigningKeyResponse:
        public_key, key_id = self._learning.signing_key()
        return pb.GetPackageSigningKeyResponse(public_key=public_key, key_id=key_id)

    async def RecordPackageEvent(
        self, request: pb.RecordPackageEventRequest, context: grpc.aio.ServicerContext
    ) -> pb.RecordPackageEventResponse:
        appended = await self._learning.record_package_event(
            request.scope.tenant_id,
            request.scope.user_id,
            request.device_id,
            request.package_id,
            request.version,
            PackageAction(pb.PackageAction.Name(request.action).removeprefix("PACKAGE_ACTION_")),
            request.sha256,
            micros_of(request.now),
        )
        return pb.RecordPackageEventResponse(
            sequence=appended.sequence, duplicate=appended.duplicate
        )

    async def _learn_from_turn(
        self,
        scope: tuple[str, str],
        text: str,
        correction: pb.Correction | None,
        session_id: str = "",
    ) -> None:
        """What a user turn teaches the capsule."""
        pair = (correction.heard, correction.meant) if correction is not None else None
        await self._learning.observe_turn(*scope, text, pair, session_id)

    async def _erase_learning(self, scope: tuple[str, str], erasure: pb.Erasure | None) -> None:
        """A forget reaches the capsule: everything shreds the user's key, words drop entries."""
        if erasure is None:
            return
        if erasure.everything:
            await self._learning.forget_user(*scope)
            return
        # A forgotten conversation takes what it taught, whether or not its words were named.
        await self._learning.forget(*scope, list(erasure.forget_terms), erasure.session_id)
