"""Pure composition of the Context Bundle: filter verdict applied, caps filled in rank
order, atoms tagged, one question at most, and the 32 KB byte cap enforced.

Nothing here reads a clock, draws a random number or depends on dict order: the same
gathered state and request give the same bundle.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from memmesh import bundle_items as items_of
from memmesh.bundle_items import GuardItem, kept
from memmesh.engines.context_composer.domain.hints import hint_bundle, tone_labels
from memmesh.engines.context_composer.domain.model import (
    CONFIRMED,
    CONFLICT,
    Bundle,
    Composed,
    ComposeQuery,
    Counters,
    Digest,
    Entity,
    Gathered,
    GuardVerdict,
    Loop,
    MemoryAtom,
    PushMemory,
    Question,
    Retrieved,
    TaggedAtom,
    TurnRecord,
)
from memmesh.engines.context_composer.domain.questions import choose_question, do_not_repeat_keys
from memmesh.engines.context_composer.domain.resume import (
    ResumeSurface,
    kept_bullets,
    resume_question,
    resume_surface,
)
from memmesh.engines.context_composer.domain.tagging import tag_atom
from memmesh.engines.context_composer.domain.text import asks_for_recall, cut_words, sentences_of

# Seed 001 §2.11.9 hard caps.
BUNDLE_BYTES_CAP = 32 * 1024
MAX_ATOMS = 20
MAX_EXCERPTS = 2
EXCERPT_CHARS = 280
MAX_WORKING_TURNS = 6
# Bounds of the other parts, so that one long turn cannot crowd out the rest.
WORKING_TURN_CHARS = 1000
# Thread and episode digests paged in (seed 001 §2.20): each is a bounded extractive summary
# citing the turns it summarises, cut here to DIGEST_CHARS (its citations stay: they are the
# pointers to page those turns in by). With the digests citing the turns found ranked first
# (RANKING.md), the cap is more often full. What another digest already says or cites is
# left out (without_repeats) and key entities are not repeated: on LoCoMo 18 digests of at
# most 480 characters take a mean bundle of 11.9 KB.
MAX_DIGESTS = 18
DIGEST_CHARS = 480
MAX_LOOPS = 10
LOOP_CHARS = 200
SUMMARY_CHARS = 1200
MAX_PROJECT_IDS = 10
MAX_KEY_CHARS = 100
# Asked of the ranker: more turns than excerpts, since working-memory turns are skipped.
RETRIEVE_TURNS = 8
RETRIEVE_DIGESTS = 20  # the ranker returns at most 20 digests a call
GUARD_LOOPS = 50
# Graph entities (seed 003 Tier 2): the query's words looked up, one hop, a few per entity.
ENTITY_LOOKUPS = 20
ENTITY_FAN_OUT = 4
MAX_ENTITIES = 8

# Parts dropped, lowest-ranked item first, until the bundle fits the byte cap.
_DROP_ORDER = (
    "entities",
    "excerpts",
    "digests",
    "atoms",
    "loops",
    "working_memory",
    "episode_bridge",
    "rolling_summary",
    "do_not_repeat_keys",
)

Measure = Callable[[Bundle], int]


@dataclass(frozen=True)
class GuardPlan:
    """What is offered to the ExposureGuard and how."""

    items: tuple[GuardItem, ...]
    user_asked: bool
    speak_text_allowed: bool
    # What the turn may surface of the resume bundle (its bullets and question are offered).
    resume: ResumeSurface = ResumeSurface()


def candidate_atoms(retrieved: Retrieved) -> tuple[MemoryAtom, ...]:
    """The standing constraints the request could touch first, then the other ranked atoms:
    caps and the byte cap drop from the end, so a short allergy is the last atom to go."""
    standing = [a._replace(standing=True) for a in retrieved.standing]
    pushed = {a.atom_id for a in standing}
    return (*standing, *(a for a in retrieved.atoms if a.atom_id not in pushed))


def guard_plan(query: ComposeQuery, gathered: Gathered) -> GuardPlan:
    """Every candidate item, as it would appear in the bundle, for the ExposureGuard."""
    facts, retrieved, session = gathered.facts, gathered.retrieved, gathered.session
    user_asked = asks_for_recall(query.query)
    items = [
        items_of.atom_item(i, a.atom_id, a.key, a.text, a.exposure, a.topics, a.pull_only)
        for i, a in enumerate(candidate_atoms(retrieved))
    ]
    # A turn's own exposure: the archive's, tightened by the atoms it evidences.
    items += [
        items_of.turn_item(
            items_of.EXCERPT, i, cut_words(t.text, EXCERPT_CHARS), t.exposure, t.session_id
        )
        for i, t in enumerate(retrieved.turns)
    ]
    items += [
        items_of.turn_item(
            items_of.WORKING_TURN,
            i,
            cut_words(t.text, WORKING_TURN_CHARS),
            t.exposure,
            t.session_id,
        )
        for i, t in enumerate(session.turns)
    ]
    items += [
        items_of.digest_item(
            i, d.title, cut_words(d.summary, DIGEST_CHARS), d.thread_id or d.digest_id
        )
        for i, d in enumerate(retrieved.digests)
    ]
    items += [
        items_of.loop_item(i, cut_words(lp.text, LOOP_CHARS))
        for i, lp in enumerate(session.loops[:GUARD_LOOPS])
    ]
    # The summary and the bridge go sentence by sentence: what a rule holds back is cut out
    # and the rest still reaches the bundle.
    if session.rolling_summary:
        items += items_of.summary_items(
            cut_words(session.rolling_summary, SUMMARY_CHARS), query.session_id
        )
    # What the session start may surface of the resume bundle: the bullets sentence by
    # sentence, the WARM question whole.
    surface = resume_surface(query, gathered)
    items += items_of.bridge_items(surface.bullets)
    if surface.question:
        items.append(items_of.question_item("", surface.question, "", items_of.DERIVED_EXPOSURE))
    if facts.display_name:
        items.append(items_of.name_item(facts.display_name))
    items += [
        items_of.correction_item(i, p.heard, p.meant)
        for i, p in enumerate(gathered.corrections or ())
    ]
    items += [
        items_of.entity_item(i, e.related_label, e.label) for i, e in enumerate(gathered.entities)
    ]
    speak_text_allowed = facts.contact_preference == "SPEAK" or user_asked
    return GuardPlan(tuple(items), user_asked, speak_text_allowed, surface)


def related_entities(found: Sequence[Entity], named: Sequence[str]) -> tuple[Entity, ...]:
    """The entities found, without those the query names itself, each once, in the order found."""
    seen = set(named)
    kept: list[Entity] = []
    for entity in found:
        if entity.node_id not in seen and len(kept) < MAX_ENTITIES:
            seen.add(entity.node_id)
            kept.append(entity)
    return tuple(kept)


def _resume(
    query: ComposeQuery, surface: ResumeSurface, allowed: frozenset[str], unsaid: frozenset[str]
) -> tuple[str, Question | None]:
    """The "where we left off" bullets and the WARM question the guard let pass."""
    said = items_of.QUESTION in allowed and items_of.QUESTION not in unsaid
    question = resume_question(query, surface) if said else None
    return kept_bullets(surface.bullets, allowed), question


def _marked_turns(
    prefix: str, turns: Sequence[TurnRecord], allowed: Collection[str], unsaid: Collection[str]
) -> list[TurnRecord]:
    """The turns the guard let pass, each marked do-not-say when the verdict says so."""
    return [
        turn._replace(do_not_say=f"{prefix}{i}" in unsaid)
        for i, turn in enumerate(turns)
        if f"{prefix}{i}" in allowed
    ]


def quoting_first(digests: Sequence[Digest], ranked_turns: Sequence[TurnRecord]) -> list[Digest]:
    """The digests that cite a ranked turn first, then the others, each group in rank order:
    a turn is ranked on its own words, a digest on a whole summary, so a digest quoting a
    turn found relevant is the likelier to hold the answer when the cap cuts the rest."""
    ranked = {t.turn_id for t in ranked_turns}
    quoting = [d for d in digests if ranked.intersection(d.evidence_turn_ids)]
    return quoting + [d for d in digests if not ranked.intersection(d.evidence_turn_ids)]


def without_repeats(digests: Sequence[Digest]) -> list[Digest]:
    """Each digest without the sentences an earlier one already holds (a session's digest
    and its episodes' quote the same turns) and without the turns an earlier one already
    cites, and without a digest all of whose sentences are there already: the bytes go to
    digests that say something else."""
    seen: set[str] = set()
    cited: set[str] = set()
    fresh_digests: list[Digest] = []
    for digest in digests:
        said = sentences_of(digest.summary)
        fresh = [sentence for sentence in said if sentence not in seen]
        seen.update(said)
        if said and not fresh:
            continue
        evidence = tuple(t for t in digest.evidence_turn_ids if t not in cited)
        cited.update(evidence)
        fresh_digests.append(
            digest._replace(summary=" ".join(fresh), evidence_turn_ids=evidence)
            if len(fresh) != len(said) or len(evidence) != len(digest.evidence_turn_ids)
            else digest
        )
    return fresh_digests


def choose_excerpts(ranked: Sequence[TurnRecord], present: Collection[str]) -> list[TurnRecord]:
    """The first MAX_EXCERPTS ranked turns not already in working memory."""
    fresh = [t for t in ranked if t.turn_id not in present]
    return [t._replace(text=cut_words(t.text, EXCERPT_CHARS)) for t in fresh[:MAX_EXCERPTS]]


@dataclass
class _Parts:
    """The candidate parts after filtering, before the byte cap trims them."""

    atoms: list[TaggedAtom]
    excerpts: list[TurnRecord]
    digests: list[Digest]
    loops: list[Loop]
    working_memory: list[TurnRecord]
    episode_bridge: str
    rolling_summary: str
    do_not_repeat_keys: list[str]
    entities: list[Entity]

    def drop_one(self) -> bool:
        """Drop the lowest-ranked item of the first non-empty part in drop order."""
        for name in _DROP_ORDER:
            value = getattr(self, name)
            if not value:
                continue
            if isinstance(value, str):
                setattr(self, name, "")
            elif name == "working_memory":
                value.pop(0)  # oldest turn first
            else:
                value.pop()
            return True
        return False


def compose_bundle(
    query: ComposeQuery,
    gathered: Gathered,
    plan: GuardPlan,
    verdict: GuardVerdict,
    measure: Measure,
) -> Composed:
    """The bundle, hints, tone and counters for one turn."""
    facts, retrieved, session = gathered.facts, gathered.retrieved, gathered.session
    allowed, unsaid = verdict.allowed_item_ids, verdict.do_not_say_item_ids
    pull_allowed = plan.user_asked or not facts.recall_only_when_asked

    tagged = (
        [
            TaggedAtom(a, tag_atom(a, facts, query.now_us), f"{items_of.ATOM}{i}" in unsaid)
            for i, a in enumerate(candidate_atoms(retrieved))
            if f"{items_of.ATOM}{i}" in allowed and a.status != "SUPERSEDED"
        ]
        if pull_allowed
        else []
    )
    dnr = do_not_repeat_keys(facts, tagged)
    _, unanswered = choose_question(query, tagged, dnr.keys)
    tagged = [t for t in tagged if t.atom.atom_id not in unanswered][:MAX_ATOMS]

    working = [
        t._replace(text=cut_words(t.text, WORKING_TURN_CHARS))
        for t in _marked_turns(items_of.WORKING_TURN, session.turns, allowed, unsaid)
    ][-MAX_WORKING_TURNS:]
    ranked_turns = _marked_turns(items_of.EXCERPT, retrieved.turns, allowed, unsaid)
    digests = (
        without_repeats(
            [
                d._replace(summary=cut_words(d.summary, DIGEST_CHARS))
                for d in quoting_first(
                    kept(items_of.DIGEST, retrieved.digests, allowed), ranked_turns
                )
            ]
        )[:MAX_DIGESTS]
        if pull_allowed
        else []
    )
    excerpts = choose_excerpts(ranked_turns, {t.turn_id for t in working}) if pull_allowed else []
    loops = [
        lp._replace(text=cut_words(lp.text, LOOP_CHARS))
        for lp in kept(items_of.LOOP, session.loops[:GUARD_LOOPS], allowed)
    ]
    loops = sorted(loops, key=lambda lp: (-lp.salience, lp.open_us, lp.loop_id))[:MAX_LOOPS]
    summary = items_of.kept_sentences(
        items_of.SUMMARY, cut_words(session.rolling_summary, SUMMARY_CHARS), allowed
    )
    entities = kept(items_of.ENTITY, gathered.entities, allowed) if pull_allowed else []

    left_off, offered = _resume(query, plan.resume, allowed, unsaid)
    parts = _Parts(
        atoms=tagged,
        excerpts=excerpts,
        digests=digests,
        loops=loops,
        working_memory=working,
        episode_bridge=left_off,
        rolling_summary=summary,
        do_not_repeat_keys=[k for k in dnr.keys if len(k) <= MAX_KEY_CHARS],
        entities=entities,
    )
    name = facts.display_name if items_of.NAME in allowed else ""
    projects = sorted(
        {t.atom.key.split(".")[1] for t in tagged if t.atom.key.startswith("project.")} - {""}
    )
    while True:
        question, _ = choose_question(query, parts.atoms, parts.do_not_repeat_keys)
        # One question at most: a question about the request comes before the resume one.
        question = question or offered
        bundle = Bundle(
            now_us=query.now_us,
            mode=query.mode,
            push=PushMemory(
                display_name=name,
                primary_language=facts.primary_language,
                contact_preference=facts.contact_preference.lower(),
                timezone=facts.timezone,
                active_project_ids=tuple(p for p in projects if len(p) <= MAX_KEY_CHARS)[
                    :MAX_PROJECT_IDS
                ],
                do_not_repeat_keys=tuple(parts.do_not_repeat_keys),
            ),
            last_interaction_us=max(facts.last_interaction_us, session.last_interaction_us),
            working_memory=tuple(parts.working_memory),
            rolling_summary=parts.rolling_summary,
            loops=tuple(parts.loops),
            atoms=tuple(parts.atoms),
            excerpts=tuple(parts.excerpts),
            digests=tuple(parts.digests),
            episode_bridge=parts.episode_bridge,
            question=question,
            entities=tuple(parts.entities),
        )
        size = measure(bundle)
        if size <= BUNDLE_BYTES_CAP or not parts.drop_one():
            break

    corrections = kept(items_of.CORRECTION, gathered.corrections or (), allowed)
    hints = hint_bundle(
        facts.primary_language,
        bundle.atoms,
        corrections,
        (name,) if name else (),
        gathered.learned_vocabulary,
    )
    return Composed(
        bundle=bundle,
        hints=hints,
        tone_labels=tone_labels(query.query),
        learned_tone=gathered.learned_tone,
        counters=counters_of(bundle, size, verdict.do_not_mention_hits),
        do_not_repeat_evicted=dnr.evicted,
        user_asked=plan.user_asked,
        speak_text_allowed=plan.speak_text_allowed,
        offered_work_order_id=plan.resume.work_order_id
        if bundle.episode_bridge or (bundle.question is not None and bundle.question is offered)
        else "",
    )


def counters_of(bundle: Bundle, size: int, do_not_mention_hits: int) -> Counters:
    """Seed 001 §2.12 counters of a bundle."""
    confirmed = sum(1 for t in bundle.atoms if t.tag == CONFIRMED)
    return Counters(
        context_bundle_bytes=size,
        atoms_selected_count=len(bundle.atoms),
        excerpts_selected_count=len(bundle.excerpts),
        confirmed_count=confirmed,
        tentative_count=len(bundle.atoms) - confirmed,
        conflict_trigger_count=sum(1 for t in bundle.atoms if t.tag == CONFLICT),
        clarification_due_to_memory_count=1 if bundle.question is not None else 0,
        do_not_mention_hits_count=do_not_mention_hits,
    )
