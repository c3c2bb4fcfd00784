"""The only place that knows both the AtomExtractor's proto and domain types."""

from __future__ import annotations

import base64
import binascii
import json

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.engines.atom_extractor.domain.capsule import (
    AtomChange,
    AtomRecord,
    CorrectionPair,
    ProvenanceEntry,
    RejectionEntry,
)
from memmesh.engines.atom_extractor.domain.erasure import Erasure
from memmesh.extraction.model import Command, ExtractedFact
from memmesh.runtime.errors import FieldViolation, InvalidInput
from memmesh.runtime.timeconv import timestamp_of

_CATEGORIES = {
    "preference": memory_pb2.ATOM_CATEGORY_PREFERENCE,
    "relationship": memory_pb2.ATOM_CATEGORY_RELATIONSHIP,
    "identity": memory_pb2.ATOM_CATEGORY_IDENTITY,
    "constraint": memory_pb2.ATOM_CATEGORY_CONSTRAINT,
}


def scope_message(tenant_id: str, user_id: str) -> scope_pb2.UserScope:
    """The (tenant, user) a peer call is about."""
    return scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)


def scope_of(scope: scope_pb2.UserScope) -> tuple[str, str]:
    """The (tenant, user) a request is about."""
    return scope.tenant_id, scope.user_id


def atom_message(atom: AtomRecord) -> memory_pb2.Atom:
    """A capsule atom as common.v1.Atom (times of 0 stay unset)."""
    message = memory_pb2.Atom(
        atom_id=atom.atom_id,
        key=atom.key,
        text=atom.text,
        category=_CATEGORIES.get(atom.category, memory_pb2.ATOM_CATEGORY_UNSPECIFIED),
        type=memory_pb2.AtomType.Value(f"ATOM_TYPE_{atom.type.value}"),
        provenance=memory_pb2.Provenance.Value(f"PROVENANCE_{atom.provenance.value}"),
        confidence_bp=atom.confidence_bp,
        exposure=memory_pb2.Exposure.ValueType(
            atom.exposure
        ),  # the numbers are common.v1.Exposure's
        pinned=atom.pinned,
        pull_only=atom.pull_only,
        critical_tokens=list(atom.critical_tokens),
        use_count=atom.use_count,
        version=atom.version,
        evidence_turn_ids=list(atom.evidence_turn_ids),
        status=memory_pb2.AtomStatus.Value(f"ATOM_STATUS_{atom.status.value}"),
        conflict_atom_id=atom.conflict_atom_id,
        topics=list(atom.topics),
    )
    for field, micros in (
        ("create_time", atom.create_time_us),
        ("confirm_time", atom.confirm_time_us),
        ("last_use_time", atom.last_use_time_us),
    ):
        if micros:
            getattr(message, field).CopyFrom(timestamp_of(micros))
    return message


def fact_message(fact: ExtractedFact) -> pb.ExtractedFact:
    return pb.ExtractedFact(
        text=fact.text,
        category=_CATEGORIES.get(fact.category, memory_pb2.ATOM_CATEGORY_UNSPECIFIED),
        type=memory_pb2.AtomType.Value(f"ATOM_TYPE_{fact.type.value}"),
        confidence_bp=fact.confidence_bp,
        key=fact.key,
        critical_tokens=list(fact.critical_tokens),
    )


def change_message(change: AtomChange) -> pb.AtomChange:
    return pb.AtomChange(
        kind=pb.ChangeKind.Value(f"CHANGE_KIND_{change.kind.value}"),
        atom=atom_message(change.atom),
        reason_code=change.reason_code,
        confidence_delta_bp=change.confidence_delta_bp,
    )


def command_value(command: Command | None) -> pb.Command.ValueType:
    return (
        pb.COMMAND_UNSPECIFIED if command is None else pb.Command.Value(f"COMMAND_{command.value}")
    )


def command_of(value: pb.Command.ValueType) -> Command:
    """The domain command of a proto value (the validator already refused UNSPECIFIED)."""
    name = pb.Command.Name(value).removeprefix("COMMAND_")
    return Command(name)


def rejection_message(entry: RejectionEntry) -> pb.Rejection:
    return pb.Rejection(
        candidate_text=entry.candidate_text,
        type=memory_pb2.AtomType.Value(f"ATOM_TYPE_{entry.type.value}"),
        confidence_bp=entry.confidence_bp,
        reason_code=entry.reason_code,
        threshold_bp=entry.threshold_bp,
        details=entry.details,
        turn_id=entry.turn_id,
        reject_time=timestamp_of(entry.reject_time_us),
    )


def provenance_message(entry: ProvenanceEntry) -> pb.ProvenanceRecord:
    return pb.ProvenanceRecord(
        turn_id=entry.turn_id,
        provider=entry.provider,
        model=entry.model,
        prompt_version=entry.prompt_version,
        input_hash=entry.input_hash,
        output_hash=entry.output_hash,
        latency_ms=entry.latency_ms,
        attempts=entry.attempts,
        fallback_used=entry.fallback_used,
        fallback_reason=entry.fallback_reason,
        record_time=timestamp_of(entry.record_time_us),
    )


def correction_record(pair: CorrectionPair) -> pb.CorrectionRecord:
    return pb.CorrectionRecord(
        correction=pb.Correction(heard=pair.heard, meant=pair.meant),
        turn_id=pair.turn_id,
        record_time=timestamp_of(pair.record_time_us),
    )


def page_token(atom: AtomRecord) -> str:
    """An opaque token naming the last atom of a page."""
    return base64.urlsafe_b64encode(json.dumps([atom.key, atom.atom_id]).encode()).decode()


def page_after(token: str) -> tuple[str, str] | None:
    """The (key, id) a page token names; a malformed token is bad input."""
    if not token:
        return None
    try:
        key, atom_id = json.loads(base64.urlsafe_b64decode(token.encode()))
        return str(key), str(atom_id)
    except (ValueError, TypeError, binascii.Error) as bad:
        raise InvalidInput(
            [FieldViolation("page_token", "is not a token this service issued")]
        ) from bad


def erasure_message(erasure: Erasure | None) -> pb.Erasure | None:
    """What a forget reached, for the caller; None when nothing was forgotten."""
    if erasure is None:
        return None
    return pb.Erasure(
        everything=erasure.everything,
        session_id=erasure.session_id,
        forget_terms=list(erasure.terms),
        emptied_turn_ids=list(erasure.whole_turn_ids),
    )
