"""gRPC adapter of the AtomExtractor: proto in, one use-case call, proto out."""

from __future__ import annotations

import grpc

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.atom_extractor.v1 import atom_extractor_service_pb2_grpc as pb_grpc
from memmesh.common.v1 import memory_pb2
from memmesh.engines.atom_extractor import mapping
from memmesh.engines.atom_extractor.domain.capsule import ChangeKind, TurnInput
from memmesh.engines.atom_extractor.domain.control import MarkFlags
from memmesh.engines.atom_extractor.learning import mapping as learning_mapping
from memmesh.engines.atom_extractor.learning.rpcs import LearningRpcs
from memmesh.engines.atom_extractor.learning.service import LearningService
from memmesh.engines.atom_extractor.use_cases import CapsuleService
from memmesh.extraction.model import Command
from memmesh.policy.sensitivity import Exposure
from memmesh.runtime.errors import FieldViolation, InvalidInput
from memmesh.runtime.timeconv import micros_of

DEFAULT_PAGE = 100


def _limit(value: int) -> int:
    return value or DEFAULT_PAGE


# ThreadStore thread ids are at most this long.
MAX_THREAD_ID = 128


class AtomExtractorServicer(LearningRpcs, pb_grpc.AtomExtractorServiceServicer):
    def __init__(self, service: CapsuleService, learning: LearningService) -> None:
        self._service = service
        self._learning = learning

    async def Process(
        self, request: pb.ProcessRequest, context: grpc.aio.ServicerContext
    ) -> pb.ProcessResponse:
        turn = request.turn
        role = "user" if turn.role == memory_pb2.ROLE_USER else "assistant"
        # Unset: a caller inside the mesh that predates the field (see the proto).
        verified = request.identity_verified or not request.HasField("identity_verified")
        result = await self._service.process(
            *mapping.scope_of(request.scope),
            TurnInput(turn.turn_id, turn.session_id, role, turn.text, verified),
            micros_of(request.now),
        )
        outcome = result.outcome
        response = pb.ProcessResponse(
            relevant=result.relevant,
            facts=[mapping.fact_message(f) for f in result.facts],
            changes=[mapping.change_message(c) for c in outcome.changes],
            command=mapping.command_value(result.command),
            command_target=result.command_target,
            rejections=[mapping.rejection_message(r) for r in result.rejections],
            duplicate=outcome.duplicate,
            pending_effects=outcome.pending_effects,
        )
        erasure = mapping.erasure_message(outcome.plan.erasure if outcome.plan else None)
        if erasure is not None:
            response.erasure.CopyFrom(erasure)
        if result.correction is not None:
            response.correction.CopyFrom(
                pb.Correction(heard=result.correction.heard, meant=result.correction.meant)
            )
        await self._erase_learning(mapping.scope_of(request.scope), erasure)
        learns = result.command in (None, Command.CORRECTION) and not result.keeps_nothing
        # The learning capsule is voice-locked: an unverified speaker teaches it nothing.
        if role == "user" and verified and learns and not outcome.duplicate:
            correction = response.correction if result.correction is not None else None
            await self._learn_from_turn(
                mapping.scope_of(request.scope), turn.text, correction, turn.session_id
            )
        return response

    async def Forget(
        self, request: pb.ForgetRequest, context: grpc.aio.ServicerContext
    ) -> pb.ForgetResponse:
        outcome = await self._service.forget(
            *mapping.scope_of(request.scope),
            list(request.atom_ids),
            request.target,
            request.session_id,
            request.last_referenced,
            request.reason_code,
            micros_of(request.now),
        )
        return pb.ForgetResponse(
            forgotten_atom_ids=[
                c.atom.atom_id for c in outcome.changes if c.kind is ChangeKind.FORGOTTEN
            ]
        )

    async def ListAtoms(
        self, request: pb.ListAtomsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListAtomsResponse:
        limit = _limit(request.page_size)
        atoms = await self._service.list_atoms(
            *mapping.scope_of(request.scope),
            mapping.page_after(request.page_token),
            limit + 1,
        )
        page = atoms[:limit]
        token = mapping.page_token(page[-1]) if len(atoms) > limit else ""
        return pb.ListAtomsResponse(
            atoms=[mapping.atom_message(a) for a in page], next_page_token=token
        )

    async def Correct(
        self, request: pb.CorrectRequest, context: grpc.aio.ServicerContext
    ) -> pb.CorrectResponse:
        heard, meant = request.correction.heard.strip(), request.correction.meant.strip()
        if not heard or not meant or heard.lower() == meant.lower():
            raise InvalidInput(
                [FieldViolation("correction.meant", "must differ from heard and not be blank")]
            )
        outcome = await self._service.correct(
            *mapping.scope_of(request.scope),
            heard,
            meant,
            request.turn_id,
            micros_of(request.now),
        )
        response = pb.CorrectResponse(pair_recorded=not outcome.duplicate)
        if not outcome.duplicate:
            await self._learn_from_turn(mapping.scope_of(request.scope), "", request.correction)
        corrected = next((c for c in outcome.changes if c.kind is ChangeKind.CORRECTED), None)
        if corrected is not None:
            response.change.CopyFrom(mapping.change_message(corrected))
        return response

    async def MarkAtoms(
        self, request: pb.MarkAtomsRequest, context: grpc.aio.ServicerContext
    ) -> pb.MarkAtomsResponse:
        exposure = None
        if request.set_exposure != memory_pb2.EXPOSURE_UNSPECIFIED:
            exposure = Exposure(request.set_exposure)
        flags = MarkFlags(
            pull_only=request.set_pull_only, pinned=request.set_pinned, exposure=exposure
        )
        outcome = await self._service.mark(
            *mapping.scope_of(request.scope),
            request.target,
            request.session_id,
            flags,
            micros_of(request.now),
        )
        return pb.MarkAtomsResponse(changes=[mapping.change_message(c) for c in outcome.changes])

    async def ListRejections(
        self, request: pb.ListRejectionsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListRejectionsResponse:
        entries = await self._service.list_rejections(
            *mapping.scope_of(request.scope), _limit(request.limit)
        )
        return pb.ListRejectionsResponse(rejections=[mapping.rejection_message(e) for e in entries])

    async def ListProvenance(
        self, request: pb.ListProvenanceRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListProvenanceResponse:
        entries = await self._service.list_provenance(
            *mapping.scope_of(request.scope), _limit(request.limit)
        )
        return pb.ListProvenanceResponse(records=[mapping.provenance_message(e) for e in entries])

    async def RunCommand(
        self, request: pb.RunCommandRequest, context: grpc.aio.ServicerContext
    ) -> pb.RunCommandResponse:
        command = mapping.command_of(request.command)
        if command is Command.CORRECTION:
            raise InvalidInput(
                [
                    FieldViolation(
                        "command", "corrections go through Correct with their heard/meant pair"
                    )
                ]
            )
        if command is Command.FORGET_THREAD and len(request.target.strip()) > MAX_THREAD_ID:
            # The target names a thread by id; one that long is no thread, and a forget that
            # could never reach the archive is refused rather than acknowledged.
            raise InvalidInput(
                [FieldViolation("target", f"a thread id is at most {MAX_THREAD_ID} characters")]
            )
        outcome = await self._service.run_command(
            *mapping.scope_of(request.scope),
            command,
            request.target.strip(),
            request.session_id,
            request.request_id,
            micros_of(request.now),
        )
        response = pb.RunCommandResponse(
            command=request.command,
            changes=[mapping.change_message(c) for c in outcome.changes],
            rules_requested=[r.label() for r in outcome.plan.rules] if outcome.plan else [],
            duplicate=outcome.duplicate,
            pending_effects=outcome.pending_effects,
        )
        erasure = mapping.erasure_message(outcome.plan.erasure if outcome.plan else None)
        if erasure is not None:
            response.erasure.CopyFrom(erasure)
        await self._erase_learning(mapping.scope_of(request.scope), erasure)
        return response

    async def ListCorrections(
        self, request: pb.ListCorrectionsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListCorrectionsResponse:
        scope = mapping.scope_of(request.scope)
        pairs = await self._service.list_corrections(*scope, _limit(request.limit))
        # The composer's hint fetch: the learning capsule rides along for a verified voice.
        hints = await self._learning.hints(*scope, request.identity_verified)
        return pb.ListCorrectionsResponse(
            corrections=[mapping.correction_record(p) for p in pairs],
            learning=learning_mapping.hints_message(hints),
        )

    async def ConfirmAtom(
        self, request: pb.ConfirmAtomRequest, context: grpc.aio.ServicerContext
    ) -> pb.ConfirmAtomResponse:
        outcome = await self._service.confirm(
            *mapping.scope_of(request.scope),
            request.atom_id,
            request.turn_id,
            micros_of(request.now),
        )
        return pb.ConfirmAtomResponse(changes=[mapping.change_message(c) for c in outcome.changes])

    async def ListEffects(
        self, request: pb.ListEffectsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListEffectsResponse:
        tally = await self._service.effect_tally(*mapping.scope_of(request.scope))
        return pb.ListEffectsResponse(
            effects=[f"{state}:{kind}={count}" for state, kind, count in tally],
            dead_effects=sum(count for state, _, count in tally if state == "dead"),
        )
