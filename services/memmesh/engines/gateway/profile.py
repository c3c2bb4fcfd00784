"""Stable facts a user states about themselves ("I'm Ana", "my native language is
Spanish") fill EMPTY Current State profile fields, so push memory and the do-not-repeat
flags carry them on every turn (seed 001 §2.11.3, §2.11.12). Current State stays the
authority: a field that holds a value is never overwritten from conversation
(§2.11.10); the disagreement is tagged CONFLICT by the composer instead."""

from __future__ import annotations

import logging

import grpc

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.lexicon.languages import language_code_in

log = logging.getLogger("memmesh.gateway.profile")
PROFILE_REASON = "USER_STATED_PROFILE"
# Only facts held with the confidence a USER_FACT needs to be trusted (seed 002).
MIN_CONFIDENCE_BP = 8000
# Interactions of the same user change the version too; a few re-reads settle it.
ADOPT_ATTEMPTS = 3
_LANGUAGE_KEYS = ("identity.language.native", "constraint.language.response")
_ADOPTED_KINDS = (extractor_pb.CHANGE_KIND_CREATED, extractor_pb.CHANGE_KIND_CONFIRMED, extractor_pb.CHANGE_KIND_CORRECTED)


def stated_profile(processed: extractor_pb.ProcessResponse) -> dict[str, str]:
    """Profile fields ("display_name", "primary_language") the turn's applied changes state."""
    fields: dict[str, str] = {}
    for change in processed.changes:
        atom = change.atom
        trusted = (
            change.kind in _ADOPTED_KINDS
            and atom.status == memory_pb2.ATOM_STATUS_ACTIVE
            and atom.confidence_bp >= MIN_CONFIDENCE_BP
            and atom.exposure == memory_pb2.EXPOSURE_SAFE_TO_SPEAK
        )
        if not trusted:
            continue
        if atom.key == "identity.name" and len(atom.critical_tokens) == 1:
            fields["display_name"] = atom.critical_tokens[0]
        elif atom.key in _LANGUAGE_KEYS and (code := language_code_in(atom.text)):
            fields.setdefault("primary_language", code)
    return fields


async def adopt_stated_profile(
    state: state_grpc.CurrentStateServiceStub,
    scope: scope_pb2.UserScope,
    turn: memory_pb2.Turn,
    processed: extractor_pb.ProcessResponse,
    timeout_s: float,
) -> None:
    """Fill the empty profile fields the turn states; best effort (the next statement retries)."""
    for field, value in sorted(stated_profile(processed).items()):
        for _ in range(ADOPT_ATTEMPTS):
            try:
                current = (await state.Get(state_pb.GetRequest(scope=scope), timeout=timeout_s)).state
                if getattr(current.profile, field):
                    break  # Current State already holds a value: it wins
                await state.Apply(
                    state_pb.ApplyRequest(
                        scope=scope,
                        change=state_pb.StateChange(**{f"set_{field}": value}),
                        expected_version=current.version,
                        reason_code=PROFILE_REASON,
                        idempotency_key=f"profile:{field}:{turn.turn_id}"[:128],
                        now=turn.time,
                    ),
                    timeout=timeout_s,
                )
                break
            except grpc.aio.AioRpcError as error:
                # ABORTED: another change (an interaction) moved the version; look again.
                if error.code() != grpc.StatusCode.ABORTED:
                    log.info("profile not adopted code=%s", error.code().name)
                    return
