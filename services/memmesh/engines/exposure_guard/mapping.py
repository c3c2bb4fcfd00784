"""The only place that knows both the ExposureGuard's proto and domain types."""

from __future__ import annotations

from memmesh.common.v1 import memory_pb2
from memmesh.engines.exposure_guard.domain.filtering import Exposed, FilterOutcome
from memmesh.engines.exposure_guard.domain.matching import Item
from memmesh.engines.exposure_guard.domain.recall import RecallSummary, SummaryAtom
from memmesh.engines.exposure_guard.domain.rules import (
    Channel,
    Rule,
    RuleId,
    RuleKind,
    TargetType,
    rule_id,
)
from memmesh.errors import FieldViolation, InvalidInput
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as pb
from memmesh.policy.sensitivity import Exposure
from memmesh.runtime.timeconv import timestamp_of

_KINDS = {
    pb.RULE_KIND_DO_NOT_MENTION: RuleKind.DO_NOT_MENTION,
    pb.RULE_KIND_DO_NOT_STORE: RuleKind.DO_NOT_STORE,
    pb.RULE_KIND_PULL_ONLY: RuleKind.PULL_ONLY,
}
_KIND_NUMBERS = {kind: number for number, kind in _KINDS.items()}
_CHANNELS: dict[int, Channel] = {
    memory_pb2.CHANNEL_VOICE: Channel.VOICE,
    memory_pb2.CHANNEL_TEXT: Channel.TEXT,
}


def channel_of(number: int) -> Channel:
    """The domain channel (the validator has refused UNSPECIFIED already)."""
    return _CHANNELS[number]


def rule_id_of(message: pb.Rule, path: str = "rule") -> RuleId:
    """The rule's id, target normalised; InvalidInput naming the field when unusable."""
    return rule_id(
        _KINDS[message.kind], TargetType(message.target_type), message.target, f"{path}.target"
    )


def rule_message(rule: Rule) -> pb.Rule:
    return pb.Rule(
        kind=_KIND_NUMBERS[rule.id.kind],
        target_type=pb.TargetType.ValueType(rule.id.target_type),
        target=rule.id.target,
        create_time=timestamp_of(rule.create_time_us),
        subject_terms=rule.terms,
    )


_EXPOSURES: dict[int, Exposure] = {exposure.value: exposure for exposure in Exposure}


def exposure_of_wire(number: int) -> Exposure:
    """A common.v1.Exposure number; unset (0) counts as INTERNAL_ONLY: what nobody classified
    never travels (nor does a number the validator would have refused)."""
    return _EXPOSURES.get(number, Exposure.INTERNAL_ONLY)


def _unique(ids: list[str], repeated: str, name: str) -> None:
    seen: dict[str, int] = {}
    for index, value in enumerate(ids):
        if value in seen:
            message = f"duplicates {repeated}[{seen[value]}].{name}"
            raise InvalidInput([FieldViolation(f"{repeated}[{index}].{name}", message)])
        seen[value] = index


def exposed_items(request: pb.FilterRequest) -> list[Exposed]:
    """Filter items in request order; item ids must be unique."""
    _unique([item.item_id for item in request.items], "items", "item_id")
    return [
        Exposed(
            Item(
                item.item_id,
                item.key,
                tuple(item.topics),
                item.text,
                item.thread_id,
                item.work_order_id,
                item.atom_id,
            ),
            exposure_of_wire(item.exposure),
            item.pull_only,
        )
        for item in request.items
    ]


def filter_response(outcome: FilterOutcome) -> pb.FilterResponse:
    return pb.FilterResponse(
        allowed_item_ids=outcome.allowed_item_ids,
        hits=[
            pb.RuleHit(
                rule=key.rule,
                target_type=pb.TargetType.ValueType(key.target_type),
                target=key.target,
                hit_count=count,
            )
            for key, count in outcome.hits
        ],
        do_not_mention_hits=outcome.do_not_mention_hits,
        do_not_say_item_ids=outcome.do_not_say_item_ids,
    )


def fact_of(request: pb.CheckStoreRequest) -> Item:
    """The fact about to be stored, as the rules see it."""
    return Item(
        item_id=request.atom_id,
        key=request.key,
        topics=tuple(request.topics),
        text=request.text,
        thread_id=request.thread_id,
        work_order_id=request.work_order_id,
        atom_id=request.atom_id,
    )


def summary_atoms(request: pb.RecallSummaryRequest) -> list[SummaryAtom]:
    """The atoms offered to the summary; atom ids must be set and unique."""
    for index, atom in enumerate(request.atoms):
        if not atom.atom_id:
            raise InvalidInput([FieldViolation(f"atoms[{index}].atom_id", "is required")])
    _unique([atom.atom_id for atom in request.atoms], "atoms", "atom_id")
    return [
        SummaryAtom(
            atom_id=atom.atom_id,
            key=atom.key,
            text=atom.text,
            topics=tuple(atom.topics),
            exposure=exposure_of_wire(atom.exposure),
            pinned=atom.pinned,
            confidence_bp=atom.confidence_bp,
            superseded=atom.status == memory_pb2.ATOM_STATUS_SUPERSEDED,
        )
        for atom in request.atoms
    ]


def summary_response(summary: RecallSummary) -> pb.RecallSummaryResponse:
    return pb.RecallSummaryResponse(
        items=summary.items, atom_ids=summary.atom_ids, omitted_count=summary.omitted_count
    )
