"""Durable-fact rules: categories, negation, distillation, exclusions, determinism."""

import pytest

from memmesh.extraction import FactType, extract


def _only_fact(text):
    result = extract(text)
    assert result.relevant, f"expected a fact from {text!r}"
    assert len(result.facts) == 1, result.facts
    return result.facts[0]


@pytest.mark.parametrize(
    "text, category, token",
    [
        ("i'm deathly allergic to sesame, carry an epipen and all", "constraint", "sesame"),
        ("um I've been vegetarian since college", "constraint", "vegetarian"),
        ("honestly I can't stand olives", "preference", "olives"),
        ("my favourite band is probably gonna always be Blur", None, None),
        ("I'm a retired firefighter", "identity", "firefighter"),
        ("name's Ottilie btw", "identity", "ottilie"),
        ("my grandpa Anselm taught me to fish", "relationship", "anselm"),
        ("Korean is my first language", "identity", "korean"),
        ("I'm hard of hearing so keep replies in text", "constraint", "hearing"),
    ],
)
def test_single_durable_fact_by_category(text, category, token):
    result = extract(text)
    if category is None:
        assert result.relevant is False  # "probably" hedges the favourite
        return
    fact = _only_fact(text)
    assert fact.category == category
    assert token in fact.text.lower()
    assert fact.text.startswith("User")


def test_negated_diet_is_a_durable_constraint():
    fact = _only_fact("I don't eat meat anymore")
    assert fact.category == "constraint"
    assert "meat" in fact.text and "not" in fact.text


def test_negated_liking_is_a_durable_preference():
    fact = _only_fact("not a fan of musicals, never have been")
    assert fact.category == "preference"
    assert "not a fan of musicals" in fact.text


def test_uncertain_liking_stores_nothing():
    result = extract("I don't know if I like jazz")
    assert result.relevant is False
    assert result.facts == ()


@pytest.mark.parametrize(
    "text",
    [
        "ugh I'm so stressed out right now",
        "if I ever lived in Norway I'd learn to ski",
        "I think I might be allergic to kiwi?",
        "I kinda like opera I guess",
        "oh sure, I just LOVE waiting at the DMV",
        "my uncle says I'm a terrible cook",
        "I'm on painkillers for the next week",
        "I'm planning to learn Portuguese next year",
        "we're moving to Valencia in April",
        "what's the tallest mountain in Africa",
        "set a reminder for my dentist appointment",
        "that reply was way too wordy",
        "apparently the new iPhone is coming out soon",
        "thanks, you're a lifesaver",
    ],
)
def test_excluded_content_is_not_relevant(text):
    result = extract(text)
    assert result.relevant is False, result.facts
    assert result.facts == ()


def test_episodic_details_are_distilled_away():
    fact = _only_fact("just landed in Oslo after a conference, I'm a marine biologist")
    assert fact.category == "identity"
    assert "marine biologist" in fact.text
    assert "oslo" not in fact.text.lower() and "conference" not in fact.text.lower()


def test_question_that_states_a_fact_keeps_only_the_fact():
    fact = _only_fact("since I'm lactose intolerant, which cheeses are safe?")
    assert fact.category == "constraint"
    assert "lactose intolerant" in fact.text
    assert "cheese" not in fact.text.lower()


def test_named_person_in_news_is_a_relationship_not_a_user_fact():
    result = extract("my nephew Kofi broke his arm at football practice yesterday")
    assert [f.category for f in result.facts] == ["relationship"]
    fact = result.facts[0]
    assert "Kofi" in fact.text and "arm" not in fact.text


def test_durable_fact_about_a_relative_stays_with_the_relative():
    fact = _only_fact("my son Bram is allergic to bee stings")
    assert fact.category == "relationship"
    assert "Bram" in fact.text and "bee stings" in fact.text
    assert "User is allergic" not in fact.text


def test_several_distinct_facts_are_returned_separately():
    result = extract("I'm a welder, I live in Gdansk, and my wife Ola and I keep halal")
    by_category = sorted((f.category, f.text) for f in result.facts)
    assert [c for c, _ in by_category] == ["constraint", "identity", "identity", "relationship"]
    assert any("halal" in t for _, t in by_category)
    assert any("Gdansk" in t for _, t in by_category)


def test_habit_stated_as_pattern_is_typed_user_pattern():
    fact = _only_fact("I always order the vegetarian option when I fly")
    assert fact.type is FactType.USER_PATTERN
    assert fact.category == "preference"


def test_shared_history_is_typed_shared_narrative():
    fact = _only_fact("we've been talking for three years now")
    assert fact.type is FactType.SHARED_NARRATIVE
    assert fact.key == "narrative.shared_history"


def test_keys_are_stable_across_rephrasing():
    first = _only_fact("I live in Porto")
    second = _only_fact("I moved to Braga last month")
    assert first.key == second.key == "identity.residence"
    assert "last month" not in second.text


def test_speech_transcript_without_punctuation_or_capitals():
    result = extract("um so like my husband dario and i are both vegan you know")
    texts = " | ".join(f.text for f in result.facts)
    assert "Dario" in texts and "vegan" in texts


def test_assistant_turns_never_produce_user_facts():
    result = extract("I'm a vegan chef who lives in Rome.", role="assistant")
    assert result.relevant is False
    assert result.facts == () and result.command is None


def test_same_input_gives_identical_output():
    text = "I'm Ghanaian, I live in Leeds, my sister Efua is a midwife, and I hate coriander"
    assert extract(text) == extract(text)
    assert len(extract(text).facts) == 4


def test_confidence_is_integer_basis_points():
    fact = _only_fact("I'm allergic to latex")
    assert isinstance(fact.confidence_bp, int)
    assert 8000 <= fact.confidence_bp <= 10_000


def test_at_most_five_facts_per_turn():
    text = (
        "I'm vegan, I'm diabetic, I'm colorblind, I'm left-handed, I'm a plumber, "
        "and my brother Ivo is a chef"
    )
    assert len(extract(text).facts) == 5


@pytest.mark.parametrize(
    "text, name",
    [
        ("My dentist is Zoxkårumoa.", "Zoxkårumoa"),
        ("My niece is Åsa.", "Åsa"),
        ("By the way, my niece's name is Müller and she's from Bonn.", "Müller"),
        ("My aunt Zoë lives in Oslo.", "Zoë"),
    ],
)
def test_a_relative_named_in_any_script_is_kept_with_the_name_as_critical_token(text, name):
    # A forget of the person cuts the name from the transcript only when the fact holds it.
    fact = _only_fact(text)
    assert fact.category == "relationship"
    assert name in fact.critical_tokens
    assert name in fact.text


@pytest.mark.parametrize(
    "text, head, place",
    [
        ("i'm a part-time lifeguard at the local pool", "lifeguard", "pool"),
        ("I'm a volunteer paramedic in my village", "paramedic", "village"),
    ],
)
def test_a_self_description_with_a_place_is_keyed_by_its_head_noun(text, head, place):
    # The head noun is the one before the place; "my village" is the user's, told as theirs.
    fact = _only_fact(text)
    assert place not in fact.key
    assert fact.key in ("identity.occupation", f"identity.self_description.{head}")
    assert head in fact.text and place in fact.text
    assert " my " not in f" {fact.text} "


@pytest.mark.parametrize(
    "text, place",
    [
        ("Any decent ramen in Leeds? I live there.", "Leeds"),
        ("Is it snowing in Tromso today? That's where I live.", "Tromso"),
        ("Good schools in Ghent? We just moved there.", "Ghent"),
    ],
)
def test_where_the_user_lives_may_be_named_in_the_clause_before(text, place):
    facts = [f for f in extract(text).facts if f.key == "identity.residence"]
    assert [f.text for f in facts] == [f"User lives in {place}."]


def test_there_with_no_place_named_before_is_no_residence():
    assert not [f for f in extract("Hi. That's where I live.").facts if "live" in f.text]


@pytest.mark.parametrize(
    "said, fact",
    [
        ("I am studying medicine in Krakow", "User is studying medicine in Krakow."),
        ("I'm studying nursing", "User is studying nursing."),
        ("I'm doing a PhD in chemistry", "User is doing a PhD in chemistry."),
    ],
)
def test_studies_are_said_in_the_users_verb_whether_or_not_i_am_is_contracted(
    said: str, fact: str
) -> None:
    assert [f.text for f in extract(said).facts] == [fact]


@pytest.mark.parametrize(
    "said, fact",
    [
        ("I've been a widower for a while now", "User has been a widower for a while."),
        ("I've been a nurse for ten years", "User has been a nurse for ten years."),
        (
            "I have been a baker for most of my life",
            "User has been a baker for most of their life.",
        ),
    ],
)
def test_what_the_user_has_long_been_is_who_they_are(said: str, fact: str) -> None:
    assert [f.text for f in extract(said).facts] == [fact]


@pytest.mark.parametrize(
    "said, fact",
    [
        ("fyi I'm a huge Tolkien nerd so go wild", "User is a Tolkien nerd."),
        ("I'm a computer geek", "User is a computer geek."),
    ],
)
def test_a_nerd_or_a_geek_of_something_is_a_taste_for_it(said: str, fact: str) -> None:
    assert [(f.text, f.category) for f in extract(said).facts] == [(fact, "preference")]
