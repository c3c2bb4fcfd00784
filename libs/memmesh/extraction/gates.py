"""Seed 002 validation: grounding, type rules, semantic sanity and confidence gates.

Shared by the rule path and the future semantic (LLM) path, so it trusts nothing about a
candidate except what it can check against the source turn.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable

from memmesh.text import stem

from .model import (
    BASIS_POINTS_MAX,
    CATEGORIES,
    Candidate,
    ExtractedFact,
    FactType,
    Rejection,
    RejectionReason,
)
from .text import normalize

USER_FACT_MIN_BP = 8000
USER_PATTERN_MIN_BP = 7500
USER_PATTERN_APPLY_BP = 8000
SHARED_NARRATIVE_MIN_BP = 6000
# Share of a fact's content stems that must occur in the source ("key phrase matching").
GROUNDING_MIN_OVERLAP_BP = 7500
MAX_FACT_CHARS = 240

_MINIMUM_BP = {
    FactType.USER_FACT: USER_FACT_MIN_BP,
    FactType.USER_PATTERN: USER_PATTERN_MIN_BP,
    FactType.SHARED_NARRATIVE: SHARED_NARRATIVE_MIN_BP,
}
# Words the renderer adds around the user's own words; they need no grounding (the last
# line: the learned path's category frames, "User's taste: ...").
_RENDER_VOCABULARY = frozenset(
    """
user user's they them their theirs themselves assistant assistant's the a an and or of to in on
for with at by from is are was be been has have had who named called not no does do doesn't
don't can't cannot never always only also prefers likes loves dislikes hates enjoys adores
wants uses lives takes tolerate tolerates own is into fan favorite favourite units over than
rather would will it its this that as some any which when while up out about because name
taste circle background limit note household they're they've they'd they'll years old
""".split()
)
# "kind of" hedges ("I kind of like jazz"), not after a determiner ("that kind of stuff"), as
# in the markers the proposers read (markers._HEDGE).
_HEDGE_IN_TEXT = re.compile(
    r"\b(?:maybe|probably|might|perhaps|possibly|kinda|sorta|would like to|I guess|seems)\b|"
    r"(?<!what )(?<!which )(?<!that )(?<!this )(?<!any )(?<!every )(?<!some )\bkind of\b|"
    r"(?<!what )\bsort of\b",
    re.I,
)
_TRANSIENT_IN_TEXT = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|right now|this week|"
    r"next week|last night|for the next|at the moment)\b",
    re.I,
)
_AUTHORITY_CLAIM = re.compile(
    r"\b(?:you told me|you promised|you said|is true|expert|"
    r"you agreed|must|comply)\b",
    re.I,
)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|my|me|mine)\b")


def apply_gates(
    candidates: Iterable[Candidate], source_text: str
) -> tuple[list[ExtractedFact], list[Rejection]]:
    """Validate candidates against the source turn; return accepted facts and the rejection log."""
    source_lower = normalize(source_text).lower()
    source_stems = _stems(source_lower)
    accepted: list[ExtractedFact] = []
    rejections: list[Rejection] = []
    for candidate in candidates:
        rejection = (
            _semantic_check(candidate)
            or _grounding_check(candidate, source_lower, source_stems)
            or _type_rule_check(candidate)
            or _confidence_check(candidate)
        )
        if rejection:
            rejections.append(rejection)
        else:
            accepted.append(
                ExtractedFact(
                    text=candidate.text,
                    category=candidate.category,
                    type=candidate.type,
                    confidence_bp=candidate.confidence_bp,
                    key=candidate.key,
                    critical_tokens=candidate.critical_tokens,
                    evidence_span=candidate.evidence_span,
                )
            )
    return accepted, rejections


def _reject(
    candidate: Candidate, reason: RejectionReason, threshold_bp: int | None, **details: str
) -> Rejection:
    return Rejection(
        candidate_text=candidate.text,
        type=candidate.type,
        confidence_bp=candidate.confidence_bp,
        reason_code=reason,
        threshold_bp=threshold_bp,
        details=tuple(sorted(details.items())),
    )


def _semantic_check(candidate: Candidate) -> Rejection | None:
    problem = None
    text = candidate.text.strip()
    if candidate.category not in CATEGORIES:
        problem = f"unknown category {candidate.category!r}"
    elif not isinstance(candidate.type, FactType):
        problem = f"unknown type {candidate.type!r}"
    elif not 0 <= candidate.confidence_bp <= BASIS_POINTS_MAX:
        problem = "confidence outside 0..10000 bp"
    elif not re.match(r"^User\b", text) or len(text.split()) < 3:
        problem = "not a declarative statement about the user"
    elif len(text) > MAX_FACT_CHARS:
        problem = "statement too long"
    elif "?" in text:
        problem = "statement is a question"
    elif _FIRST_PERSON.search(text):
        problem = "first-person pronoun left in the statement"
    elif not candidate.key or not re.match(r"^[a-z_]+(?:\.[a-z0-9_+#'-]+)+$", candidate.key):
        problem = f"invalid key {candidate.key!r}"
    if problem:
        return _reject(candidate, RejectionReason.SEMANTICALLY_INVALID, None, problem=problem)
    return None


def _grounding_check(
    candidate: Candidate, source_lower: str, source_stems: set[str]
) -> Rejection | None:
    body = re.sub(r"^User(?:'s)?\s+", "", candidate.text).rstrip(".").lower()
    if body and body in source_lower:
        return None
    missing_tokens = [
        t
        for t in candidate.critical_tokens
        if t.lower() not in source_lower and not _said_without_s(t, source_lower)
    ]
    # A word's stems: "goes" (the renderer's for "I go") stems to "goe", so less its -es too.
    content = {
        _stem(w): {_stem(w), _stem(w[:-2])} if w.endswith("es") else {_stem(w)}
        for w in _words(candidate.text)
        if w not in _RENDER_VOCABULARY
    }
    missing_terms = sorted(
        s
        for s, forms in content.items()
        if not any(_stem_in_source(f, source_stems) for f in forms)
    )
    present = len(content) - len(missing_terms)
    overlap_bp = (present * BASIS_POINTS_MAX) // len(content) if content else 0
    if not missing_tokens and content and overlap_bp >= GROUNDING_MIN_OVERLAP_BP:
        return None
    return _reject(
        candidate,
        RejectionReason.NOT_GROUNDED_IN_SOURCE,
        GROUNDING_MIN_OVERLAP_BP,
        exact_match="false",
        key_phrase_overlap_bp=str(overlap_bp),
        missing_terms=",".join(missing_terms),
        missing_critical_tokens=",".join(missing_tokens),
    )


# A fact's text names the listener as "the assistant" (text.third_person).
_THE_LISTENERS = re.compile(r"\bthe assistant's\b")


def _type_rule_check(candidate: Candidate) -> Rejection | None:
    threshold = _MINIMUM_BP.get(candidate.type)
    if candidate.violations:
        return _reject(
            candidate,
            RejectionReason.TYPE_RULE_VIOLATION,
            threshold,
            markers=",".join(candidate.violations),
            evidence=candidate.evidence_span,
        )
    if candidate.type in (FactType.USER_FACT, FactType.USER_PATTERN):
        # "I love your turtles": praise for the listener's things (labelling rule 2).
        if candidate.category == "preference" and _THE_LISTENERS.search(candidate.text):
            return _reject(
                candidate,
                RejectionReason.TYPE_RULE_VIOLATION,
                threshold,
                rule="a comment on the listener",
            )
        if _HEDGE_IN_TEXT.search(candidate.text):
            return _reject(
                candidate,
                RejectionReason.TYPE_RULE_VIOLATION,
                threshold,
                rule="hedged or hypothetical wording",
            )
        if _TRANSIENT_IN_TEXT.search(candidate.text):
            return _reject(
                candidate, RejectionReason.TYPE_RULE_VIOLATION, threshold, rule="time-bound wording"
            )
    if candidate.type is FactType.SHARED_NARRATIVE and _AUTHORITY_CLAIM.search(candidate.text):
        return _reject(
            candidate,
            RejectionReason.TYPE_RULE_VIOLATION,
            threshold,
            rule="narrative asserts authority",
        )
    return None


def _confidence_check(candidate: Candidate) -> Rejection | None:
    minimum = _MINIMUM_BP[candidate.type]
    if candidate.confidence_bp < minimum:
        return _reject(candidate, RejectionReason.CONFIDENCE_BELOW_THRESHOLD, minimum)
    if candidate.type is FactType.USER_PATTERN and candidate.confidence_bp < USER_PATTERN_APPLY_BP:
        # seed 002: 0.75-0.79 patterns are logged as proposals and never auto-applied.
        return _reject(candidate, RejectionReason.PATTERN_PROPOSAL, USER_PATTERN_APPLY_BP)
    return None


def _said_without_s(word: str, said: Container[str]) -> bool:
    """ "DJs" for "I DJ": the renderer's -s on a word the source says (or the stemmer leaves)
    without it."""
    return len(word) >= 3 and word.endswith("s") and word[:-1].lower() in said


def _stem_in_source(stem: str, source_stems: set[str]) -> bool:
    if stem in source_stems or _said_without_s(stem, source_stems):
        return True
    # Derivations the stemmer keeps apart ("explain"/"explan") still count when they share a
    # five-letter root.
    return len(stem) >= 5 and any(s[:5] == stem[:5] and len(s) >= 5 for s in source_stems)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9+#]+(?:'[a-z]+)?", text.lower())


def _stem(word: str) -> str:
    return stem(word.removesuffix("'s"))


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in _words(text)}
