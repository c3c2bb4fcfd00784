"""One erasure plan per forget (seed 001 §2.11.5, §2.11.11, §2.17 Q16): what a forget
removes besides the atoms, so every copy of the user's words obeys it.

A plan names the archived turns to redact and the terms to cut from them, the
conversation or the whole user to forget, and the atoms devices must drop. The capsule
store applies the local part (rejection, provenance and correction logs, queued effects)
in the transaction that forgets; the rest becomes effects on the ThreadStore, the
RetrievalRanker, OutboxSync and the Ledger. Erasure marks keep a late extraction of a
turn said before the forget from bringing a forgotten fact back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memmesh.engines.atom_extractor.domain.capsule import (
    AtomRecord,
    Effect,
    EffectKind,
    ErasureMark,
    LateErasures,
    LocalErasure,
    digest,
)
from memmesh.engines.atom_extractor.domain.working_set import ChangeContext
from memmesh.extraction.model import ExtractedFact
from memmesh.extraction.patterns import Observation, ObservationErasure

# ThreadStore.RedactTurns takes at most 128 turn ids and 128 terms of 128 characters.
REDACT_BATCH = 128
MAX_TERMS = 128
MAX_TERM_LEN = 128
# OutboxSync.ForgetItems takes at most 500 keys per request.
DEVICE_BATCH = 500
# Atoms' devices copies are kept under this item kind.
ATOM_ITEM_KIND = "atom"

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
# Words of an atom's text that say nothing about the user on their own.
_PLAIN = frozenset(
    "user user's users is are was were has have had the a an of in on at to for and or with "
    "my their his her its is lives live likes like works work from by as not no be been "
    "name named called".split()
)


@dataclass(frozen=True)
class Erasure:
    """What a forget removes beyond the atoms it deletes from the capsule."""

    # Forget everything of the user (atoms, logs, archive, index, devices, ledger key).
    everything: bool = False
    # A conversation to forget whole (its turns, and the atoms only it evidenced).
    session_id: str = ""
    # Archived turns to redact, and what to cut from them (no terms: the whole text).
    turn_ids: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()
    # Archived turns to empty entirely (a DO_NOT_STORE turn).
    whole_turn_ids: tuple[str, ...] = ()
    # Forgotten atoms, for devices' copies.
    atom_ids: tuple[str, ...] = ()
    # Keyed hashes of the forget's words, so a late extraction of an older turn that states
    # the same thing is dropped (never the words themselves).
    word_hashes: tuple[str, ...] = ()
    # Keyed hashes of a do-not-store subject's words (singular forms): every later turn that
    # speaks of it keeps nothing and loses the sentences that do, whether or not a fact is
    # extracted from it (the ExposureGuard's rule judges only atoms).
    blocked_hashes: tuple[str, ...] = ()

    def local_turn_ids(self) -> frozenset[str]:
        """Turns whose log entries (rejections, provenance, corrections) go."""
        return frozenset((*self.turn_ids, *self.whole_turn_ids))


def word_hash(tenant_id: str, user_id: str, word: str) -> str:
    """A scope-keyed hash of one lower-cased word (the erasure marks hold no words)."""
    return digest("erasure-word", tenant_id, user_id, word.lower())[:24]


def content_words(words: Iterable[str]) -> tuple[str, ...]:
    """The words of a forget that can stand for what was said (no plain words)."""
    return tuple(sorted({w.lower() for w in words if w.lower() not in _PLAIN and len(w) > 1}))


def words_of(text: str) -> frozenset[str]:
    """Lower-cased content words of a text (possessives folded)."""
    return frozenset(
        w.lower().removesuffix("'s") for w in _WORD.findall(text) if w.lower() not in _PLAIN
    )


def forget_terms(atoms: Iterable[AtomRecord], target_words: Sequence[str]) -> tuple[str, ...]:
    """What to cut from the evidence turns: the atoms' critical tokens (names, numbers,
    places), the last part of their keys when it is a name, the content words of their text
    when they have no token, and the words the user named; longest first, bounded."""
    terms: set[str] = {w for w in target_words if len(w) > 2}
    for atom in atoms:
        tokens = {t.strip() for t in atom.critical_tokens if len(t.strip()) > 1}
        terms |= tokens
        if not tokens:
            terms |= {w for w in words_of(atom.text) if len(w) > 2}
    cleaned = sorted({t[:MAX_TERM_LEN] for t in terms if t.strip()}, key=lambda t: (-len(t), t))
    return tuple(cleaned[:MAX_TERMS])


def only_evidenced_by(atoms: Iterable[AtomRecord], turn_ids: frozenset[str]) -> list[AtomRecord]:
    """Atoms whose every evidence turn is one of these (a forgotten conversation's atoms)."""
    return [a for a in atoms if a.evidence_turn_ids and set(a.evidence_turn_ids) <= turn_ids]


def _batches(items: Sequence[str], size: int) -> list[list[str]]:
    return [list(items[start : start + size]) for start in range(0, len(items), size)]


def erasure_effects(erasure: Erasure, ctx: ChangeContext) -> list[Effect]:
    """The effects that carry a forget to the other engines, in the order they are to run."""
    effects: list[Effect] = []
    if erasure.everything:
        effects.append(Effect(EffectKind.THREAD_FORGET_USER, {"now_us": ctx.now_us}))
        effects.append(Effect(EffectKind.INDEX_FORGET_USER, {}))
        effects.append(Effect(EffectKind.DEVICE_FORGET_USER, {"now_us": ctx.now_us}))
        # The guard's rules name the subjects (targets and subject terms).
        effects.append(Effect(EffectKind.GUARD_FORGET_USER, {"now_us": ctx.now_us}))
        effects.append(Effect(EffectKind.LEDGER_SHRED, {"now_us": ctx.now_us}))
        return effects
    # A conversation itself is forgotten by the plan's THREAD_FORGET (ThreadStore.ForgetThread
    # forgets a session thread whole); its session id here only marks it for late extractions.
    whole = sorted(set(erasure.whole_turn_ids))
    for batch in _batches(whole, REDACT_BATCH):
        effects.append(
            Effect(EffectKind.THREAD_REDACT, {"turn_ids": batch, "terms": [], "now_us": ctx.now_us})
        )
    partial = sorted(set(erasure.turn_ids) - set(whole))
    if partial and erasure.terms:
        for batch in _batches(partial, REDACT_BATCH):
            effects.append(
                Effect(
                    EffectKind.THREAD_REDACT,
                    {"turn_ids": batch, "terms": list(erasure.terms), "now_us": ctx.now_us},
                )
            )
    for batch in _batches(sorted(set(erasure.atom_ids)), DEVICE_BATCH):
        effects.append(
            Effect(
                EffectKind.DEVICE_FORGET,
                {"item_kind": ATOM_ITEM_KIND, "keys": batch, "now_us": ctx.now_us},
            )
        )
    return effects


def local_erasure(erasure: Erasure, ctx: ChangeContext) -> LocalErasure:
    """The part of a forget the capsule store applies in the forget's own transaction."""
    marks: list[ErasureMark] = []
    if erasure.everything:
        marks.append(ErasureMark("user", "", ctx.now_us))
    if erasure.session_id:
        marks.append(ErasureMark("session", erasure.session_id, ctx.now_us))
    marks += [ErasureMark("turn", t, ctx.now_us) for t in sorted(erasure.local_turn_ids())]
    if erasure.word_hashes:
        marks.append(ErasureMark("words", ",".join(sorted(erasure.word_hashes)), ctx.now_us))
    if erasure.blocked_hashes:
        marks.append(ErasureMark("dns", ",".join(sorted(erasure.blocked_hashes)), ctx.now_us))
    return LocalErasure(
        everything=erasure.everything,
        turn_ids=erasure.local_turn_ids(),
        terms=erasure.terms,
        marks=tuple(marks),
    )


def late_dropped(
    tenant_id: str,
    user_id: str,
    facts: Sequence[ExtractedFact],
    late: LateErasures,
    now_us: int,
) -> set[int]:
    """Positions of facts a forget made after the turn was said has already taken back:
    every word the forget named is among the fact's words (key, text, tokens)."""
    dropped: set[int] = set()
    sets = [words for words, erase_us in late.word_sets if erase_us >= now_us and words]
    if not sets:
        return dropped
    for position, fact in enumerate(facts):
        said = words_of(" ".join((fact.key.replace(".", " ").replace("_", " "), fact.text)))
        said |= {t.lower() for t in fact.critical_tokens}
        hashes = {word_hash(tenant_id, user_id, w) for w in said}
        hashes |= {word_hash(tenant_id, user_id, w.removesuffix("s")) for w in said}
        if any(words <= hashes for words in sets):
            dropped.add(position)
    return dropped


def late_terms(
    tenant_id: str, user_id: str, dropped: Sequence[ExtractedFact], late: LateErasures
) -> tuple[str, ...]:
    """What to cut from a turn whose facts a forget had already taken back: the facts'
    critical tokens and those of their words the forget named."""
    named = set().union(*(words for words, _ in late.word_sets)) if late.word_sets else set()
    terms: set[str] = set()
    for fact in dropped:
        terms |= {t for t in fact.critical_tokens if len(t.strip()) > 1}
        for word in words_of(fact.text) | set(fact.key.replace(".", " ").replace("_", " ").split()):
            if word_hash(tenant_id, user_id, word) in named and len(word) > 2:
                terms.add(word)
    return tuple(sorted(t[:MAX_TERM_LEN] for t in terms))[:MAX_TERMS]


def observation_erasure(
    erasure: Erasure | None, forgotten_signatures: Sequence[str] = ()
) -> ObservationErasure | None:
    """The behaviour observations a forget takes: every one for everything, a forgotten
    conversation's, whole turns', those of the patterns it forgot, and those whose object holds
    a forgotten term (as the archive keeps a turn's other sentences, the learner keeps the
    turn's other requests); None when it takes none."""
    plan = erasure or Erasure()
    taken = ObservationErasure(
        everything=plan.everything,
        session_ids=(plan.session_id,) if plan.session_id else (),
        turn_ids=tuple(sorted(set(plan.whole_turn_ids))),
        signatures=tuple(sorted(set(forgotten_signatures))),
        terms=plan.terms,
    )
    return None if taken.is_empty() else taken


def late_kept_observations(
    tenant_id: str,
    user_id: str,
    observations: Sequence[Observation],
    late: LateErasures,
    now_us: int,
) -> tuple[Observation, ...]:
    """A turn's observations less those a forget made after it was said has taken back
    (every word the forget named is in the observation's object), as `late_dropped` does
    for facts."""
    sets = [words for words, erase_us in late.word_sets if erase_us >= now_us and words]
    kept = []
    for observation in observations:
        said = words_of(observation.label) | set(observation.signature.partition("|")[2].split())
        hashes = {word_hash(tenant_id, user_id, w) for w in said}
        hashes |= {word_hash(tenant_id, user_id, w.removesuffix("s")) for w in said}
        if not any(words <= hashes for words in sets):
            kept.append(observation)
    return tuple(kept)


def blocked_hashes(tenant_id: str, user_id: str, words: Sequence[str]) -> tuple[str, ...]:
    """The mark of a do-not-store subject: keyed hashes of its words' singular forms."""
    return tuple(
        sorted({word_hash(tenant_id, user_id, w.lower().removesuffix("s")) for w in words})
    )


def blocked_words(tenant_id: str, user_id: str, text: str, late: LateErasures) -> tuple[str, ...]:
    """The words of a turn that speak of a do-not-store subject (every word of one of the
    user's do-not-store marks is in it); none when it speaks of none."""
    if not late.blocked_sets:
        return ()
    said = {w for w in words_of(text) | {w.lower() for w in _WORD.findall(text)} if len(w) > 1}
    by_hash: dict[str, set[str]] = {}
    for word in said:
        by_hash.setdefault(word_hash(tenant_id, user_id, word.removesuffix("s")), set()).add(word)
    hit: set[str] = set()
    for blocked in late.blocked_sets:
        if blocked and blocked <= by_hash.keys():
            hit |= {w for h in blocked for w in by_hash[h]}
    return tuple(sorted(t[:MAX_TERM_LEN] for t in hit))[:MAX_TERMS]
