"""Typed answers of the gateway, as a voice pipeline reads them."""

from __future__ import annotations

from dataclasses import dataclass, field

from memmesh.common.v1 import bundle_pb2
from memmesh.gateway.v1 import gateway_service_pb2 as pb

MODE_NAMES = {
    bundle_pb2.SESSION_MODE_UNSPECIFIED: "",
    bundle_pb2.SESSION_MODE_SESSION_START: "session_start",
    bundle_pb2.SESSION_MODE_IN_SESSION: "in_session",
}


@dataclass(frozen=True)
class BriefResult:
    """The Context Bundle of a turn, with why it is empty or partial when it is."""

    bundle: bundle_pb2.ContextBundle = field(default_factory=bundle_pb2.ContextBundle)
    hints: bundle_pb2.HintBundle = field(default_factory=bundle_pb2.HintBundle)
    tone: tuple[str, ...] = ()
    degraded: bool = False
    # The gateway's reason (BUDGET_EXCEEDED, TIER1_UNAVAILABLE:<engine>, ...) or the
    # client's own when the call failed (UNAVAILABLE, DEADLINE_EXCEEDED, BUDGET_SPENT).
    reason_code: str = ""
    degraded_parts: tuple[str, ...] = ()

    @classmethod
    def of(cls, response: pb.BriefResponse) -> BriefResult:
        """The typed view of a BriefResponse."""
        return cls(
            bundle=response.bundle,
            hints=response.hints,
            # Learned over sessions first, then this turn's; each label once.
            tone=tuple(dict.fromkeys((*response.tone.learned, *response.tone.labels))),
            degraded=response.degraded,
            reason_code=response.reason_code,
            degraded_parts=tuple(response.degraded_parts),
        )

    @classmethod
    def without_memory(cls, reason_code: str) -> BriefResult:
        """An empty bundle for a turn whose Brief could not be had."""
        return cls(degraded=True, reason_code=reason_code)


@dataclass(frozen=True)
class IngestResult:
    """What the gateway did with one turn."""

    session_id: str
    mode: str
    duplicate: bool
    extraction_queued: bool
    command: str

    @classmethod
    def of(cls, response: pb.IngestResponse) -> IngestResult:
        """The typed view of an IngestResponse."""
        return cls(
            session_id=response.session_id,
            mode=MODE_NAMES[response.mode],
            duplicate=response.duplicate,
            extraction_queued=response.extraction_queued,
            command=response.command,
        )


@dataclass(frozen=True)
class CommandResult:
    """The atoms a control command touched and the reason code logged."""

    atom_ids: tuple[str, ...]
    reason_code: str

    @classmethod
    def of(cls, response: pb.CommandResponse) -> CommandResult:
        """The typed view of a CommandResponse."""
        return cls(atom_ids=tuple(response.atom_ids), reason_code=response.reason_code)
