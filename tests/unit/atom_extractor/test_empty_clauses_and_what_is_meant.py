"""Clauses that say nothing to keep (broken off, a vague "that … thing", a denied condition,
what others do, irony), what a correction goes on to say of the word it meant, facts kept out
of a command, and shapes non-native and terse speech states facts in."""

import pytest

from memmesh.extraction import extract
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.learned.empty_clauses import (
    denies_a_condition,
    is_broken_off,
    names_only_a_vague_thing,
)
from memmesh.extraction.learned.render import render_fact
from memmesh.extraction.markers import HYPOTHETICAL, SARCASM, turn_markers
from memmesh.extraction.model import Command
from memmesh.extraction.restatement import restate_meant
from memmesh.extraction.text import normalize, split_clauses


def facts_of(text: str) -> list[tuple[str, str]]:
    return [(f.text, f.category) for f in default_hybrid_extractor().extract(text).facts]


@pytest.mark.parametrize(
    ("clause", "broken"),
    [
        ("opera is", True),
        ("my favourite band is the", True),
        ("techno and", True),
        ("opera is fine", False),
        ("my partner is Sam (she/her)", False),
    ],
)
def test_a_clause_that_stops_before_its_content_is_broken_off(clause: str, broken: bool) -> None:
    assert is_broken_off(clause) is broken


@pytest.mark.parametrize(
    ("clause", "vague"),
    [
        ("I love that crispy rice thing", True),
        ("I can't stand this whole minimalist stuff", True),
        ("I listen to kpop and stray kids, that kind of stuff", False),
        ("I love Thai green curry", False),
    ],
)
def test_an_object_that_only_points_at_a_thing_is_vague(clause: str, vague: bool) -> None:
    assert names_only_a_vague_thing(clause) is vague


@pytest.mark.parametrize(
    ("clause", "denied"),
    [
        ("not allergic or anything", True),
        ("I'm not diabetic", True),
        ("I don't have any allergies", True),
        ("I'm not a wheelchair user", True),
        ("I'm allergic to latex", False),
        ("not able to walk long distances", False),
        ("no alcohol in recipes", False),
    ],
)
def test_a_condition_said_not_to_be_had_is_denied(clause: str, denied: bool) -> None:
    assert denies_a_condition(clause) is denied


@pytest.mark.parametrize(
    "text",
    [
        "opera is... fine I guess? sometimes? no idea",
        "I'm not lactose intolerant or anything",
        "you keep saying I'm in sales",
        "everyone just calls me Bo",
        "people keep telling me to try oysters",
        "a guy in my Spanish class is from Madrid",
        "one woman from my old office just got engaged in Rome",
    ],
)
def test_clauses_that_hold_nothing_of_the_users_give_no_fact(text: str) -> None:
    assert facts_of(text) == []


def test_a_clause_elaborating_a_fact_with_that_thing_adds_no_second_fact() -> None:
    facts = facts_of("Thai food is my absolute favorite, I love that sour tamarind thing")
    assert [text for text, _ in facts] == ["User's absolute favorite is Thai food."]


def test_a_denial_beside_a_dislike_is_no_constraint() -> None:
    facts = facts_of("mushrooms are a no for me, not allergic or anything, I just hate them")
    assert all(category != "constraint" for _, category in facts)


@pytest.mark.parametrize(
    "text",
    [
        "Love traffic jams. Truly.",
        "Allergic to Tuesdays, clearly.",
        "Sure. I'm a patient person. Obviously.",
        "Of course I love when the printer jams, it is my favourite sound.",
        "obviously I'm a gifted gardener, every plant I touch dies",
    ],
)
def test_irony_said_by_a_tag_or_a_granting_opener_gives_no_fact(text: str) -> None:
    assert facts_of(text) == []


def test_an_ironic_tag_marks_the_clause_before_it() -> None:
    clauses = split_clauses("Love Mondays. Truly.")
    assert SARCASM in turn_markers(clauses)[0]


@pytest.mark.parametrize(
    "text",
    [
        "Suppose, just hypothetically, I was allergic to latex and needed dental work, how would "
        "I bring that up",
        "Hypothetically speaking, my brother is a dentist, could he write me a prescription",
    ],
)
def test_a_clause_that_only_opens_a_hypothetical_frames_its_sentence(text: str) -> None:
    assert facts_of(text) == []
    clauses = split_clauses(text)
    assert all(HYPOTHETICAL in markers for markers in turn_markers(clauses)[1:])


def test_a_hypothetical_frame_ends_with_its_sentence() -> None:
    text = "Say, for argument's sake, I moved abroad. I'm allergic to latex."
    assert ("User is allergic to latex.", "constraint") in facts_of(text)


def test_agreement_said_as_a_sentence_of_its_own_is_no_irony() -> None:
    assert ("User is vegan.", "constraint") in facts_of("Of course! I'm vegan, so no meat please")


@pytest.mark.parametrize(
    ("fact_text", "meant", "restated"),
    [
        ("it's Grete. she's my mother-in-law", "Grete", "it's Grete. my mother-in-law is Grete."),
        ("Mochi. The cat.", "Mochi", "Mochi. my cat is Mochi."),
        ("walnuts. That's the allergy.", "walnuts", "walnuts. I'm allergic to walnuts."),
        # A statement in between is what the pronoun points at; a date is nobody.
        ("cellist! I play cello, it is my job", "cellist", "cellist! I play cello, it is my job"),
        (
            "Hana's birthday is the 9th, she's my wife",
            "9th",
            "Hana's birthday is the 9th, she's my wife",
        ),
    ],
)
def test_what_a_correction_says_of_the_meant_word_is_stated_of_it(
    fact_text: str, meant: str, restated: str
) -> None:
    assert restate_meant(fact_text, meant) == restated


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "Wait, it's not Greta, it's Grete, she's my mother-in-law",
            "User's mother-in-law is Grete.",
        ),
        ("Biscuit. Not Brisket. The dog.", "User has a dog named Biscuit."),
        ("Not almonds - cashews. That's the allergy.", "User is allergic to cashews."),
        ("i meant sertraline not citalopram i take sertraline every day", "sertraline"),
    ],
)
def test_a_correction_that_says_what_the_word_is_keeps_the_fact(text: str, fact: str) -> None:
    result = default_hybrid_extractor().extract(text)
    assert result.command is Command.CORRECTION
    assert any(fact in f.text for f in result.facts), result.facts


@pytest.mark.parametrize(
    ("text", "command", "fact"),
    [
        (
            "forget this thread about the car but like keep that im a plumber",
            "FORGET_THREAD",
            "plumber",
        ),
        (
            "Forget this whole conversation. Except, I do want you to know I'm a Buddhist.",
            "FORGET_THREAD",
            "Buddhist",
        ),
        (
            "can you run through what you've got on me, for one thing I'm a dentist now",
            "RECALL_SUMMARY",
            "dentist",
        ),
        (
            "just forget the whole thread, the one thing that's still true is that I live in Perth",
            "FORGET_THREAD",
            "Perth",
        ),
    ],
)
def test_a_fact_kept_out_of_a_command_is_stored(text: str, command: str, fact: str) -> None:
    result = extract(text)
    assert result.command is Command[command]
    assert any(fact.lower() in f.text.lower() for f in result.facts), result.facts


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("My son Felix have autism", "User has a son named Felix, who has autism."),
        ("my sister Maria live in Madrid", "User has a sister named Maria, who lives in Madrid."),
    ],
)
def test_a_third_person_verb_without_its_s_still_says_what_holds(text: str, fact: str) -> None:
    assert [f.text for f in extract(text).facts] == [fact]


@pytest.mark.parametrize(
    ("text", "verb"),
    [("my boss give me the promotion", "Give"), ("my husband work as a chef", "Work")],
)
def test_a_lowercase_verb_after_a_role_is_no_name(text: str, verb: str) -> None:
    assert not any(f"is {verb}." in f.text for f in extract(text).facts)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("summer over winter, every single time", "User prefers summer."),
        ("cats over dogs any day", "User prefers cats."),
    ],
)
def test_a_choice_said_as_x_over_y_keeps_the_preferred_item(text: str, fact: str) -> None:
    assert [(f.text, f.category) for f in extract(text).facts] == [(fact, "preference")]


def test_a_pointer_in_a_choice_names_nothing() -> None:
    assert extract("snow, fireplaces, give me that over a beach any day").facts == ()


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("I'm a full-time wheelchair user", "constraint.accessibility.wheelchair"),
        ("I'm a recovering alcoholic", "constraint.sobriety"),
    ],
)
def test_an_aid_or_sobriety_said_as_what_one_is_is_a_constraint(text: str, key: str) -> None:
    [fact] = extract(text).facts
    assert (fact.category, fact.key) == ("constraint", key)


def test_a_learned_fact_restating_a_rules_name_is_dropped() -> None:
    assert facts_of("My dentist — Dr. Alvarez.") == [
        ("User's dentist is Dr. Alvarez.", "relationship")
    ]


def test_a_limit_keeps_its_no_when_rendered() -> None:
    assert render_fact("no raw onion in anything", "constraint") == (
        "User's limit: no raw onion in anything."
    )
    assert render_fact("no, I'm vegan", "constraint") == "User is vegan."


def test_a_subjectless_past_event_after_an_adverb_is_no_fact() -> None:
    assert facts_of("just lost my house keys again") == []


@pytest.mark.parametrize(
    ("text", "category", "fact", "slip"),
    [
        # What the assistant was heard to say holds the fact; the correction leaves only "Basel".
        ("You said I live in Bern, but no, it is Basel", "identity", "basel", "bern"),
        (
            "you've got my cat down as Pickle, it's Pixel, like on a screen",
            "relationship",
            "pixel",
            "pickle",
        ),
        # The user's own clause said the slip before taking it back.
        (
            "I have allergy to the shrimp, sorry, not shrimp, I mean the crab.",
            "constraint",
            "crab",
            "shrimp",
        ),
        ("No, I said Zurich, not Munich, that's where I live.", "identity", "zurich", "munich"),
        # The normaliser keeps one "I said" of "that's not what I said, I said ...".
        (
            "hang on, that's not what I said, I said I'm allergic to shellfish, not selfish",
            "constraint",
            "shellfish",
            "selfish",
        ),
    ],
)
def test_a_correction_states_the_fact_the_slip_was_in(
    text: str, category: str, fact: str, slip: str
) -> None:
    result = default_hybrid_extractor().extract(text)
    assert result.command is Command.CORRECTION
    assert [f.category for f in result.facts if fact in f.text.lower()] == [category], result.facts
    assert not any(slip in f.text.lower() for f in result.facts), result.facts


def test_a_slip_reported_of_someone_else_is_not_said_again() -> None:
    """ "You've got Bartek down as my uncle": the report names who Bartek is, as a slip."""
    facts = (
        default_hybrid_extractor()
        .extract("You've got Bartek down as my uncle. He's my stepdad.")
        .facts
    )
    assert [f.text for f in facts] == ["User's stepdad is Bartek."]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("forget the thing about me liking sushi i actually hate it now", "User hates sushi."),
        ("forget that I said I liked anchovies, I actually can't stand them", "anchovies"),
        (
            "can you like unlearn the thing about me hating tomatoes i actually love them now",
            "tomatoes",
        ),
    ],
)
def test_a_taste_forgotten_for_a_new_one_names_its_thing(text: str, fact: str) -> None:
    result = default_hybrid_extractor().extract(text)
    assert result.command is Command.FORGET
    assert [f.category for f in result.facts if fact in f.text] == ["preference"], result.facts


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("I have HIV, this only recall if I ask you, okay?", "User has HIV."),
        (
            "I'm HIV positive. keep that, but only mention it if I ask about it",
            "User is HIV positive.",
        ),
        ("I have coeliac disease", "User has coeliac disease."),
    ],
)
def test_a_health_condition_held_back_is_still_kept(text: str, fact: str) -> None:
    assert [(f.category, f.text) for f in extract(text).facts] == [("constraint", fact)]


def test_a_slip_written_down_and_called_wrong_is_a_correction_of_its_fact() -> None:
    text = (
        "Okay so earlier when I was telling you about my family you wrote down that my son is"
        " called Eli, and that's not right, it's Ilya, like the Russian name"
    )
    result = default_hybrid_extractor().extract(text)
    assert result.correction is not None
    assert (result.correction.heard, result.correction.meant) == ("Eli", "Ilya")
    assert [f.category for f in result.facts if "Ilya" in f.text] == ["relationship"]
    assert not any("Eli" in f.text for f in result.facts)


@pytest.mark.parametrize(
    ("text", "heard", "meant", "category", "fact"),
    [
        ("You write I am Hindu but I am Sikh.", "Hindu", "Sikh", "identity", "Sikh"),
        (
            "You write 'Hamburg' but I live in Homburg, is small city.",
            "Hamburg",
            "Homburg",
            "identity",
            "Homburg",
        ),
        (
            "You write that I am teacher of math, but I am teacher of physics.",
            "math",
            "physics",
            "identity",
            "physics",
        ),
        (
            "it says im gluten intolerant but i said lactose intolerant",
            "gluten",
            "lactose",
            "constraint",
            "lactose",
        ),
    ],
)
def test_what_was_written_then_the_statement_that_puts_it_right(
    text: str, heard: str, meant: str, category: str, fact: str
) -> None:
    result = default_hybrid_extractor().extract(text)
    assert result.correction is not None
    assert (result.correction.heard, result.correction.meant) == (heard, meant)
    assert [f.category for f in result.facts if fact in f.text] == [category], result.facts


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "What's a good swap for eggs in brownies? My son Rafael's allergic to them.",
            "User has a son named Rafael, who is allergic to eggs.",
        ),
        ("skip anything with soy, I react really badly to it", "User reacts really badly to soy."),
    ],
)
def test_a_reaction_to_it_names_the_thing_the_request_named(text: str, fact: str) -> None:
    assert fact in [f.text for f in default_hybrid_extractor().extract(text).facts]


def test_what_cannot_be_eaten_now_is_no_limit_of_the_thing() -> None:
    facts = (
        default_hybrid_extractor()
        .extract("I got a cake with nuts and I can't eat it now, it's stale")
        .facts
    )
    assert not any("nuts" in f.text for f in facts), facts


@pytest.mark.parametrize(
    "text",
    [
        "yeah i'm totally a morning person that's why i hit snooze six times",
        "Yeah, no, I'm definitely a morning person, that's why I hit snooze six times",
        "me? a gym person? sure, and I'm also an astronaut",
    ],
)
def test_a_claim_given_the_lie_in_its_sentence_is_a_joke(text: str) -> None:
    assert SARCASM in set().union(*turn_markers(split_clauses(normalize(text))))
    assert default_hybrid_extractor().extract(text).facts == ()


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("I'm a nurse, that's why I work nights", "User is a nurse."),
        ("I'm totally a dog person, I have three labs", "User is a dog person."),
    ],
)
def test_a_claim_with_a_reason_or_an_intensifier_alone_stands(text: str, fact: str) -> None:
    assert fact in [f.text for f in default_hybrid_extractor().extract(text).facts]
