"""The last gate of every bundle: each item is offered to the ExposureGuard again and
whatever it holds back now is removed (rules may have changed since composition); what it
lets pass to be used but not said is marked do_not_say (a mark the composer set stays)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memmesh import bundle_items as items_of
from memmesh.bundle_items import GuardItem, kept, withheld_texts
from memmesh.bundle_items_proto import exposure_name
from memmesh.common.v1 import bundle_pb2, memory_pb2


def hint_items(hints: bundle_pb2.HintBundle) -> list[GuardItem]:
    """The hint bundle's vocabulary terms and correction pairs, so a term or pair naming a
    held-back subject is removed like any other item."""
    pairs = [(pair.heard, pair.meant) for pair in hints.corrections]
    return items_of.vocabulary_items(list(hints.vocabulary)) + items_of.hint_correction_items(pairs)


def gate_hints(hints: bundle_pb2.HintBundle, allowed_ids: Iterable[str]) -> bundle_pb2.HintBundle:
    """A copy of the hints without the terms and pairs the guard held back."""
    allowed = set(allowed_ids)
    terms = kept(items_of.VOCABULARY, list(hints.vocabulary), allowed)
    pairs = kept(items_of.HINT_CORRECTION, list(hints.corrections), allowed)
    if len(terms) == len(hints.vocabulary) and len(pairs) == len(hints.corrections):
        return hints
    gated = bundle_pb2.HintBundle()
    gated.CopyFrom(hints)
    del gated.vocabulary[:]
    gated.vocabulary.extend(terms)
    del gated.corrections[:]
    gated.corrections.extend(pairs)
    return gated


def gate_items(bundle: bundle_pb2.ContextBundle, session_id: str = "") -> list[GuardItem]:
    """Every item of the bundle, as the composer offered it (memmesh.bundle_items)."""
    items = [
        items_of.atom_item(i, a.atom_id, a.key, a.text, exposure_name(a.exposure))
        for i, a in enumerate(bundle.atoms)
    ]
    for prefix, turns in (
        (items_of.EXCERPT, bundle.excerpts),
        (items_of.WORKING_TURN, bundle.working_memory),
    ):
        items += [
            items_of.turn_item(prefix, i, t.text, exposure_name(t.exposure), t.session_id)
            for i, t in enumerate(turns)
        ]
    items += [
        items_of.digest_item(i, d.title, d.summary, d.thread_id or d.digest_id)
        for i, d in enumerate(bundle.digests)
    ]
    items += [items_of.loop_item(i, lp.text) for i, lp in enumerate(bundle.active_loops)]
    items += items_of.summary_items(bundle.rolling_summary, session_id)
    items += items_of.bridge_items(bundle.episode_bridge)
    if bundle.push.display_name:
        items.append(items_of.name_item(bundle.push.display_name))
    items += [
        items_of.entity_item(i, e.related_label, e.label) for i, e in enumerate(bundle.entities)
    ]
    if bundle.HasField("clarification"):
        question = bundle.clarification
        exposure = next(
            (a.exposure for a in bundle.atoms if a.atom_id == question.atom_id),
            memory_pb2.EXPOSURE_SAFE_TO_SPEAK,
        )
        items.append(
            items_of.question_item(
                question.key, question.text, question.atom_id, exposure_name(exposure)
            )
        )
    return items


@dataclass(frozen=True)
class GateResult:
    """The bundle after the gate and the texts of what was removed."""

    bundle: bundle_pb2.ContextBundle
    removed_texts: tuple[str, ...]


_LISTED_PARTS = (
    ("atoms", items_of.ATOM),
    ("excerpts", items_of.EXCERPT),
    ("working_memory", items_of.WORKING_TURN),
    ("digests", items_of.DIGEST),
    ("active_loops", items_of.LOOP),
    ("entities", items_of.ENTITY),
)


_MARKABLE_PARTS = (
    ("atoms", items_of.ATOM),
    ("excerpts", items_of.EXCERPT),
    ("working_memory", items_of.WORKING_TURN),
)


def _unmarked(bundle: bundle_pb2.ContextBundle, unsaid: set[str]) -> bool:
    """Whether the verdict marks an item the bundle does not mark yet (or the question)."""
    if items_of.QUESTION in unsaid and bundle.HasField("clarification"):
        return True
    return any(
        f"{prefix}{i}" in unsaid and not part.do_not_say
        for field, prefix in _MARKABLE_PARTS
        for i, part in enumerate(getattr(bundle, field))
    )


def apply_gate(
    bundle: bundle_pb2.ContextBundle,
    items: list[GuardItem],
    allowed_ids: Iterable[str],
    do_not_say_ids: Iterable[str] = (),
) -> GateResult:
    """A copy of the bundle without the items the guard held back, and with the items it
    lets pass do-not-say marked so."""
    allowed, unsaid = set(allowed_ids), set(do_not_say_ids)
    removed = withheld_texts(items, allowed)
    if not removed and not _unmarked(bundle, unsaid):
        return GateResult(bundle, ())
    if unsaid:
        # Marks first, while every part still sits at the index its item id names.
        marked = bundle_pb2.ContextBundle()
        marked.CopyFrom(bundle)
        for field, prefix in _MARKABLE_PARTS:
            for i, part in enumerate(getattr(marked, field)):
                if f"{prefix}{i}" in unsaid:
                    part.do_not_say = True
        if not removed and items_of.QUESTION not in unsaid:
            return GateResult(marked, ())
        bundle = marked
    gated = bundle_pb2.ContextBundle()
    gated.CopyFrom(bundle)
    for field, prefix in _LISTED_PARTS:
        passed = kept(prefix, getattr(bundle, field), allowed)
        part = getattr(gated, field)
        del part[:]
        part.extend(passed)
    # The summary and the bridge keep the sentences that passed.
    gated.rolling_summary = items_of.kept_sentences(
        items_of.SUMMARY, bundle.rolling_summary, allowed
    )
    gated.episode_bridge = items_of.kept_sentences(items_of.BRIDGE, bundle.episode_bridge, allowed)
    if items_of.NAME not in allowed:
        gated.push.display_name = ""
    kept_atoms = {atom.atom_id for atom in gated.atoms}
    # A question says its fact aloud: one the guard would have used but not said goes too.
    if gated.HasField("clarification") and (
        items_of.QUESTION not in allowed
        or items_of.QUESTION in unsaid
        # A resume question is about a thread, not an atom.
        or (gated.clarification.atom_id and gated.clarification.atom_id not in kept_atoms)
    ):
        gated.ClearField("clarification")
    return GateResult(gated, removed)


def recount(
    counters: bundle_pb2.BundleCounters, bundle: bundle_pb2.ContextBundle, do_not_mention_hits: int
) -> bundle_pb2.BundleCounters:
    """Counters of the gated bundle; the gate's DO_NOT_MENTION hits are added to the composer's."""
    confirmed = sum(1 for atom in bundle.atoms if atom.tag == memory_pb2.MEMORY_TAG_CONFIRMED)
    return bundle_pb2.BundleCounters(
        context_bundle_bytes=bundle.ByteSize(),
        atoms_selected_count=len(bundle.atoms),
        excerpts_selected_count=len(bundle.excerpts),
        confirmed_count=confirmed,
        tentative_count=len(bundle.atoms) - confirmed,
        conflict_trigger_count=sum(
            1 for atom in bundle.atoms if atom.tag == memory_pb2.MEMORY_TAG_CONFLICT
        ),
        clarification_due_to_memory_count=1 if bundle.HasField("clarification") else 0,
        do_not_mention_hits_count=counters.do_not_mention_hits_count + do_not_mention_hits,
    )


def prune_vocabulary(
    hints: bundle_pb2.HintBundle, removed_texts: tuple[str, ...]
) -> bundle_pb2.HintBundle:
    """Hints without terms that occur in removed items, so nothing held back leaks through them."""
    if not removed_texts:
        return hints
    removed = " ".join(removed_texts).lower()
    pruned = bundle_pb2.HintBundle()
    pruned.CopyFrom(hints)
    pruned.ClearField("vocabulary")
    pruned.vocabulary.extend(term for term in hints.vocabulary if term.lower() not in removed)
    return pruned
