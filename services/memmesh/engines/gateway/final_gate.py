"""The last gate of every bundle: each item is offered to the ExposureGuard again and
whatever it holds back now is removed (rules may have changed since composition)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memmesh.common.v1 import bundle_pb2, memory_pb2
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb

_SPEAKABLE = memory_pb2.EXPOSURE_SAFE_TO_SPEAK


def gate_items(bundle: bundle_pb2.ContextBundle) -> list[guard_pb.FilterItem]:
    """Every item of the bundle as a FilterItem; ids say where the item sits."""
    items: list[guard_pb.FilterItem] = []
    exposure_of = {}
    for index, atom in enumerate(bundle.atoms):
        exposure_of[atom.atom_id] = atom.exposure
        items.append(guard_pb.FilterItem(item_id=f"a{index}", key=atom.key, exposure=atom.exposure, text=atom.text, atom_id=atom.atom_id))
    # A turn carries the archive's exposure (UNSPECIFIED never passes); the transcript-derived
    # digests, loops, summary and bridge are built from SAFE_TO_SPEAK turns only.
    for prefix, turns in (("e", bundle.excerpts), ("w", bundle.working_memory)):
        for index, turn in enumerate(turns):
            items.append(guard_pb.FilterItem(item_id=f"{prefix}{index}", thread_id=turn.session_id, exposure=turn.exposure, text=turn.text))
    for index, digest in enumerate(bundle.digests):
        text = f"{digest.title} {digest.summary}".strip()
        thread_id = digest.thread_id or digest.digest_id
        items.append(guard_pb.FilterItem(item_id=f"d{index}", thread_id=thread_id, exposure=_SPEAKABLE, text=text))
    for index, loop in enumerate(bundle.active_loops):
        items.append(guard_pb.FilterItem(item_id=f"l{index}", exposure=_SPEAKABLE, text=loop.text))
    for item_id, text in (("s", bundle.rolling_summary), ("b", bundle.episode_bridge)):
        if text:
            items.append(guard_pb.FilterItem(item_id=item_id, exposure=_SPEAKABLE, text=text))
    for index, entity in enumerate(bundle.entities):
        text = f"{entity.related_label} {entity.label}"
        items.append(guard_pb.FilterItem(item_id=f"g{index}", exposure=_SPEAKABLE, text=text))
    if bundle.push.display_name:
        items.append(guard_pb.FilterItem(item_id="n", key="identity.name", exposure=_SPEAKABLE, text=bundle.push.display_name))
    if bundle.HasField("clarification"):
        question = bundle.clarification
        items.append(
            guard_pb.FilterItem(
                item_id="q",
                key=question.key,
                exposure=exposure_of.get(question.atom_id, _SPEAKABLE),
                text=question.text,
                atom_id=question.atom_id,
            )
        )
    return items


@dataclass(frozen=True)
class GateResult:
    """The bundle after the gate and the texts of what was removed."""

    bundle: bundle_pb2.ContextBundle
    removed_texts: tuple[str, ...]


def _keep(values: Iterable[object], prefix: str, allowed: set[str]) -> list[object]:
    return [value for index, value in enumerate(values) if f"{prefix}{index}" in allowed]


def apply_gate(bundle: bundle_pb2.ContextBundle, items: list[guard_pb.FilterItem], allowed_ids: Iterable[str]) -> GateResult:
    """A copy of the bundle without the items the guard held back."""
    allowed = set(allowed_ids)
    removed = tuple(item.text for item in items if item.item_id not in allowed)
    if not removed:
        return GateResult(bundle, ())
    gated = bundle_pb2.ContextBundle()
    gated.CopyFrom(bundle)
    for field, prefix in (("atoms", "a"), ("excerpts", "e"), ("working_memory", "w"), ("digests", "d"), ("active_loops", "l"),
                          ("entities", "g")):
        kept = _keep(getattr(bundle, field), prefix, allowed)
        gated.ClearField(field)
        getattr(gated, field).extend(kept)
    if "s" not in allowed:
        gated.rolling_summary = ""
    if "b" not in allowed:
        gated.episode_bridge = ""
    if "n" not in allowed:
        gated.push.display_name = ""
    kept_atoms = {atom.atom_id for atom in gated.atoms}
    if gated.HasField("clarification") and ("q" not in allowed or gated.clarification.atom_id not in kept_atoms):
        gated.ClearField("clarification")
    return GateResult(gated, removed)


def recount(counters: bundle_pb2.BundleCounters, bundle: bundle_pb2.ContextBundle, do_not_mention_hits: int) -> bundle_pb2.BundleCounters:
    """Counters of the gated bundle; the gate's DO_NOT_MENTION hits are added to the composer's."""
    confirmed = sum(1 for atom in bundle.atoms if atom.tag == memory_pb2.MEMORY_TAG_CONFIRMED)
    return bundle_pb2.BundleCounters(
        context_bundle_bytes=bundle.ByteSize(),
        atoms_selected_count=len(bundle.atoms),
        excerpts_selected_count=len(bundle.excerpts),
        confirmed_count=confirmed,
        tentative_count=len(bundle.atoms) - confirmed,
        conflict_trigger_count=sum(1 for atom in bundle.atoms if atom.tag == memory_pb2.MEMORY_TAG_CONFLICT),
        clarification_due_to_memory_count=1 if bundle.HasField("clarification") else 0,
        do_not_mention_hits_count=counters.do_not_mention_hits_count + do_not_mention_hits,
    )


def prune_vocabulary(hints: bundle_pb2.HintBundle, removed_texts: tuple[str, ...]) -> bundle_pb2.HintBundle:
    """Hints without terms that occur in removed items, so nothing held back leaks through them."""
    if not removed_texts:
        return hints
    removed = " ".join(removed_texts).lower()
    pruned = bundle_pb2.HintBundle()
    pruned.CopyFrom(hints)
    pruned.ClearField("vocabulary")
    pruned.vocabulary.extend(term for term in hints.vocabulary if term.lower() not in removed)
    return pruned
