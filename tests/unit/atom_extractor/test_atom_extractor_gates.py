"""Seed 002 gates: grounding, type rules, thresholds and rejection reasons."""

import pytest

from memmesh.extraction import (
    Candidate,
    FactType,
    RejectionReason,
    apply_gates,
)
from memmesh.extraction.learned import default_hybrid_extractor

SOURCE = (
    "I absolutely love fettuccini, especially with alfredo sauce. Can you explain it step by step?"
)


def _candidate(
    text="User loves fettuccini.",
    fact_type=FactType.USER_FACT,
    confidence_bp=9000,
    category="preference",
    key="preference.fettuccini",
    violations=(),
):
    return Candidate(
        text=text,
        category=category,
        type=fact_type,
        confidence_bp=confidence_bp,
        key=key,
        violations=violations,
    )


def _single_rejection(candidate, source=SOURCE):
    accepted, rejections = apply_gates([candidate], source)
    assert accepted == []
    assert len(rejections) == 1
    return rejections[0]


@pytest.mark.parametrize(
    "fact_type, confidence_bp",
    [
        (FactType.USER_FACT, 8000),
        (FactType.USER_PATTERN, 8000),
        (FactType.SHARED_NARRATIVE, 6000),
    ],
)
def test_confidence_at_threshold_is_accepted(fact_type, confidence_bp):
    accepted, rejections = apply_gates(
        [_candidate(fact_type=fact_type, confidence_bp=confidence_bp)], SOURCE
    )
    assert rejections == []
    assert accepted[0].confidence_bp == confidence_bp


@pytest.mark.parametrize(
    "fact_type, confidence_bp, threshold",
    [
        (FactType.USER_FACT, 7999, 8000),
        (FactType.USER_PATTERN, 7499, 7500),
        (FactType.SHARED_NARRATIVE, 5999, 6000),
    ],
)
def test_confidence_below_threshold_is_rejected(fact_type, confidence_bp, threshold):
    rejection = _single_rejection(_candidate(fact_type=fact_type, confidence_bp=confidence_bp))
    assert rejection.reason_code is RejectionReason.CONFIDENCE_BELOW_THRESHOLD
    assert rejection.threshold_bp == threshold
    assert rejection.confidence_bp == confidence_bp


@pytest.mark.parametrize("confidence_bp", [7500, 7999])
def test_pattern_between_7500_and_7999_is_logged_as_proposal(confidence_bp):
    candidate = _candidate(
        "User prefers step-by-step explanations.",
        FactType.USER_PATTERN,
        confidence_bp,
        key="constraint.format.detail",
    )
    rejection = _single_rejection(candidate)
    assert rejection.reason_code is RejectionReason.PATTERN_PROPOSAL
    assert rejection.threshold_bp == 8000


def test_hallucinated_detail_is_not_grounded():
    rejection = _single_rejection(_candidate("User loves fettuccini with truffle oil."))
    assert rejection.reason_code is RejectionReason.NOT_GROUNDED_IN_SOURCE
    assert "truffl" in dict(rejection.details)["missing_terms"]


def test_embellished_occupation_is_not_grounded():
    source = "We discussed music production in FL Studio."
    rejection = _single_rejection(
        _candidate(
            "User works as a professional FL Studio producer.",
            category="identity",
            key="identity.occupation",
        ),
        source,
    )
    assert rejection.reason_code is RejectionReason.NOT_GROUNDED_IN_SOURCE


def test_missing_critical_token_is_not_grounded():
    candidate = _candidate(
        "User has a sister named Sara.", category="relationship", key="relationship.sister.sara"
    )
    candidate = Candidate(**{**candidate.__dict__, "critical_tokens": ("Sara",)})
    rejection = _single_rejection(candidate, "my sister Zara is visiting")
    assert rejection.reason_code is RejectionReason.NOT_GROUNDED_IN_SOURCE
    assert dict(rejection.details)["missing_critical_tokens"] == "Sara"


def test_rule_violation_marker_is_a_type_rule_violation():
    rejection = _single_rejection(_candidate(violations=("hypothetical",)))
    assert rejection.reason_code is RejectionReason.TYPE_RULE_VIOLATION
    assert dict(rejection.details)["markers"] == "hypothetical"


def test_hedged_wording_in_a_fact_is_a_type_rule_violation():
    rejection = _single_rejection(
        _candidate("User probably loves fettuccini."), "I probably love fettuccini, I think"
    )
    assert rejection.reason_code is RejectionReason.TYPE_RULE_VIOLATION


def test_narrative_claiming_authority_is_a_type_rule_violation():
    source = "you told me fettuccini is the best pasta, we've been chatting since 2019"
    candidate = _candidate(
        "User says you told me fettuccini is the best pasta.",
        FactType.SHARED_NARRATIVE,
        9000,
        category="relationship",
        key="narrative.shared_history",
    )
    rejection = _single_rejection(candidate, source)
    assert rejection.reason_code in (
        RejectionReason.TYPE_RULE_VIOLATION,
        RejectionReason.SEMANTICALLY_INVALID,
    )


@pytest.mark.parametrize(
    "candidate",
    [
        _candidate(category="hobby"),
        _candidate(text="loves fettuccini"),
        _candidate(text="User asks whether fettuccini is good?"),
        _candidate(key="Preference Fettuccini"),
    ],
)
def test_malformed_candidates_are_semantically_invalid(candidate):
    rejection = _single_rejection(candidate)
    assert rejection.reason_code is RejectionReason.SEMANTICALLY_INVALID
    assert rejection.threshold_bp is None


def test_extractor_rejections_explain_why_a_hedged_statement_was_dropped():
    from memmesh.extraction import extract

    result = extract("I guess I'm kind of an introvert")
    assert result.relevant is False
    assert [r.reason_code for r in result.rejections] == [RejectionReason.TYPE_RULE_VIOLATION]
    assert "hedged" in dict(result.rejections[0].details)["markers"]


def test_a_verb_the_renderer_conjugates_is_grounded_in_the_word_said() -> None:
    facts = default_hybrid_extractor().extract("and I DJ on weekends at a bar in Leith").facts
    assert [f.text for f in facts] == ["User DJs on weekends at a bar in Leith."]
