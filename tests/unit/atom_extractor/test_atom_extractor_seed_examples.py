"""Seed 000 few-shot examples give exactly their expected results."""

from memmesh.extraction import extract


def test_greeting_is_not_relevant():
    result = extract("Hey Orion, how are you doing today?")
    assert result.relevant is False
    assert result.facts == ()


def test_visit_plan_distils_to_the_sister_relationship():
    result = extract("I'm going to visit my sister Sarah in Chicago next week.")
    assert result.relevant is True
    assert len(result.facts) == 1
    fact = result.facts[0]
    assert fact.category == "relationship"
    assert fact.text == "User has a sister named Sarah."
    assert fact.key == "relationship.sister.sarah"
    assert "Sarah" in fact.critical_tokens
    for episodic in ("chicago", "next week", "visit"):
        assert episodic not in fact.text.lower()


def test_language_preference_keeps_both_sides_and_the_reason():
    result = extract("I actually prefer Python over C++ because it's easier to read.")
    assert len(result.facts) == 1
    fact = result.facts[0]
    assert fact.category == "preference"
    assert fact.text.startswith("User prefers Python over C++")
    assert "easier to read" in fact.text
    assert fact.confidence_bp >= 9000


def test_standing_windows_instruction_is_a_constraint():
    result = extract("Please always use PowerShell one-liners when giving me Windows commands.")
    assert len(result.facts) == 1
    fact = result.facts[0]
    assert fact.category == "constraint"
    assert "PowerShell one-liners" in fact.text
    assert "Windows commands" in fact.text
    assert fact.confidence_bp >= 9500


def test_task_request_is_not_relevant():
    result = extract("Can you help me write a poem?")
    assert result.relevant is False
    assert result.command is None
