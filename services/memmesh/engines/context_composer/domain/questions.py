"""The one-question rule (seed 001 §2.11.10), unanswered suppression and do-not-repeat
flags with their re-ask guards (§2.11.12, Q14)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memmesh.engines.context_composer.domain.model import (
    CONFIRMED,
    CONFLICT,
    STALE,
    TENTATIVE,
    ComposeQuery,
    MemoryAtom,
    Question,
    TaggedAtom,
    UserFacts,
)

# Q14: the do-not-repeat set holds at most 128 keys per user; older keys are evicted.
DO_NOT_REPEAT_CAP = 128
DO_NOT_REPEAT_EVICTION_REASON = "DO_NOT_REPEAT_LRU_CAP"
MAX_QUESTION_CHARS = 240

# Reasons that allow asking about a known stable fact again (§2.11.12).
REASK_REASONS = frozenset({"CONFLICT", "STALE", "LOW_CONFIDENCE", "USER_REQUEST", "DEVICE_RESTORE"})
_UNCERTAIN_REASON = {CONFLICT: "CONFLICT", STALE: "STALE", TENTATIVE: "LOW_CONFIDENCE"}
# Atom keys of stable facts: identity, contact preference and tracked projects.
_STABLE_PREFIXES = ("identity.", "preference.contact", "preference.language", "project.")
_QUERY_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class DoNotRepeat:
    """The do-not-repeat keys (sorted) and how many the cap evicted."""

    keys: tuple[str, ...]
    evicted: int


def _covered(key: str, keys: Iterable[str]) -> bool:
    return any(key == known or key.startswith(known + ".") for known in keys)


def _recency(atom: MemoryAtom) -> int:
    return max(atom.last_use_us, atom.confirm_us, atom.create_us)


def do_not_repeat_keys(facts: UserFacts, atoms: Sequence[TaggedAtom]) -> DoNotRepeat:
    """Stable facts known and confirmed: Current State first, then confirmed stable atoms by recency."""
    state_keys = [
        key
        for key, value in (
            ("identity.name", facts.display_name),
            ("identity.language", facts.primary_language),
            ("preference.contact", facts.contact_preference),
            ("identity.timezone", facts.timezone),
        )
        if value
    ]
    stable = [
        t.atom
        for t in atoms
        if t.tag == CONFIRMED
        and (t.atom.category == "IDENTITY" or t.atom.key.startswith(_STABLE_PREFIXES))
    ]
    # Deterministic LRU: most recently used/confirmed first, key as the tie-break.
    stable.sort(key=lambda a: (-_recency(a), a.key))
    ordered = list(
        dict.fromkeys([*state_keys, *(a.key for a in stable if not _covered(a.key, state_keys))])
    )
    kept = ordered[:DO_NOT_REPEAT_CAP]
    return DoNotRepeat(tuple(sorted(kept)), len(ordered) - len(kept))


def question_id(tenant_id: str, user_id: str, subject: str, reason_code: str) -> str:
    """Stable id of a question, so one the user left unanswered is recognised later."""
    digest = hashlib.sha256(
        "\x1f".join((tenant_id, user_id, subject, reason_code)).encode()
    ).hexdigest()
    return f"q-{digest[:24]}"


def question_subject(atom: MemoryAtom, reason_code: str) -> str:
    """What a question is about: a conflict is about its key (both atoms of the pair ask
    the same thing), any other question about its atom."""
    return f"key:{atom.key}" if reason_code == "CONFLICT" else atom.atom_id


def _reason(
    tagged: TaggedAtom, stable_keys: Sequence[str], query: ComposeQuery, second_pass: bool
) -> str | None:
    key_confirmed = _covered(tagged.atom.key, stable_keys)
    if not second_pass:
        if tagged.tag == CONFLICT:
            return "CONFLICT"
        # A known, confirmed stable fact is not asked again for a weaker duplicate of it.
        if tagged.tag in (STALE, TENTATIVE) and not key_confirmed:
            return _UNCERTAIN_REASON[tagged.tag]
        return None
    if query.user_review_requested:
        return "USER_REQUEST"
    if query.device_restored and key_confirmed:
        return "DEVICE_RESTORE"
    return None


def _second_person(text: str) -> str:
    for subject, replacement in (
        ("User's ", "your "),
        ("User is ", "you are "),
        ("User has ", "you have "),
        ("User ", "you "),
    ):
        if text.startswith(subject):
            return replacement + text[len(subject) :]
    return text[:1].lower() + text[1:]


def question_text(atom: MemoryAtom, reason_code: str) -> str:
    """The question, phrased from the atom (which has passed the ExposureGuard)."""
    fact = _second_person(atom.text.rstrip(". "))
    templates = {
        "CONFLICT": "I have two different answers here. Is it right that {}?",
        "STALE": "It has been a while, so let me check: is it still true that {}?",
        "LOW_CONFIDENCE": "I'm not sure I got this right: {}?",
        "USER_REQUEST": "Is this still correct: {}?",
        "DEVICE_RESTORE": "Since your device was restored, can you confirm: {}?",
    }
    text = templates[reason_code].format(fact)
    if len(text) <= MAX_QUESTION_CHARS:
        return text
    return text[: MAX_QUESTION_CHARS - 2].rsplit(" ", 1)[0] + " ?"


def choose_question(
    query: ComposeQuery, atoms: Sequence[TaggedAtom], stable_keys: Sequence[str]
) -> tuple[Question | None, frozenset[str]]:
    """At most one question about the top-ranked item that needs one, and the uncertain
    atoms to leave out because their question went unanswered this session."""
    if not _QUERY_WORD.search(query.query) and not (
        query.user_review_requested or query.device_restored
    ):
        return None, frozenset()
    asked = query.unanswered_question_ids
    unanswered: set[str] = set()
    chosen: Question | None = None
    for second_pass in (False, True):
        for tagged in atoms:
            if tagged.do_not_say:
                # A question says its fact aloud: never about one to use but not say.
                continue
            reason = _reason(tagged, stable_keys, query, second_pass)
            if reason is None:
                continue
            atom = tagged.atom
            qid = question_id(
                query.tenant_id, query.user_id, question_subject(atom, reason), reason
            )
            if qid in asked:
                # §2.11.12: proceed without the uncertain memory and do not repeat the question.
                if not second_pass:
                    unanswered.add(atom.atom_id)
            elif chosen is None:
                chosen = Question(qid, atom.atom_id, atom.key, question_text(atom, reason), reason)
    return chosen, frozenset(unanswered)
