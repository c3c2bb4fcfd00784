"""Conditions called the user's own, what the user depends on, learners' present tense, notes
said without their verb, and corrections followed by what the meant word is."""

import pytest

from memmesh.extraction import extract
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.model import Command


def _facts(text: str, category: str) -> list[str]:
    result = default_hybrid_extractor().extract(text)
    return [f.text.lower() for f in result.facts if f.category == category]


@pytest.mark.parametrize(
    "text, tokens",
    [
        # A condition named as the user's own, whoever else the turn is about.
        (
            "the nurse had to redo the whole form because of my heart condition, again",
            ["a heart condition"],
        ),
        ("my fibromyalgia was awful on the train home", ["fibromyalgia"]),
        ("so the hike was short, thanks to my sciatica", ["sciatica"]),
        # What the user's days run on.
        ("i rely on my wheelchair for pretty much everything", ["relies on", "wheelchair"]),
        ("I depend on the tram to get anywhere", ["depends on", "tram"]),
        # A fear with a British intensifier before it.
        ("I'm properly terrified of wasps", ["wasp"]),
        ("heads up, I'm seriously scared of heights", ["height"]),
    ],
)
def test_a_lasting_limit_said_in_passing_is_kept(text: str, tokens: list[str]) -> None:
    for facts in (
        [f.text.lower() for f in extract(text).facts if f.category == "constraint"],
        _facts(text, "constraint"),
    ):
        assert any(all(t in fact for t in tokens) for fact in facts), facts


@pytest.mark.parametrize(
    "text",
    [
        # Levels everyone has, and bouts that come and go.
        "my blood pressure was a bit high at the check-up",
        "my anxiety before the interview was through the roof",
        "my migraine finally went away",
        # Someone else's condition is theirs (labelling rule 4).
        "my dad's asthma was bad last night",
        # A person relied on is no device.
        "I rely on my sister for lifts",
    ],
)
def test_no_limit_of_the_user_is_made_of_these(text: str) -> None:
    assert _facts(text, "constraint") == []


@pytest.mark.parametrize(
    "text, category, tokens",
    [
        (
            "Since three years I learn the Japanese language at night school.",
            "identity",
            ["japanese"],
        ),
        ("I work in a bank and now I study Mandarin.", "identity", ["mandarin"]),
        ("Hometown: Ouagadougou.", "identity", ["hometown", "ouagadougou"]),
        ("my hometown is Łódź", "identity", ["łódź"]),
        ("Fave singer Nina Simone, fave drink mezcal.", "preference", ["nina simone"]),
        ("Fave singer Nina Simone, fave drink mezcal.", "preference", ["mezcal"]),
        ("Okra? Soap. Never again.", "preference", ["okra"]),
        ("Allergic: penicillin.", "constraint", ["allergic to penicillin"]),
        ("Me: Tomasz. Welder.", "identity", ["tomasz"]),
    ],
)
def test_a_note_or_a_learner_phrasing_gives_its_fact(
    text: str, category: str, tokens: list[str]
) -> None:
    facts = _facts(text, category)
    assert any(all(t in fact for t in tokens) for fact in facts), facts


def test_the_verb_rely_is_not_read_as_an_adverb() -> None:
    from memmesh.extraction.learned.render import render_fact

    assert render_fact("I rely on my cane", "constraint") == "User relies on their cane."


@pytest.mark.parametrize(
    "text",
    [
        "Vegan for Lent.",
        "im off chocolate for lent",
        "off booze for dry january",
    ],
)
def test_a_season_given_up_is_time_bound(text: str) -> None:
    assert default_hybrid_extractor().extract(text).facts == ()


@pytest.mark.parametrize(
    "text, heard, meant, category, tokens",
    [
        ("Not Greta. Grete. My aunt.", "Greta", "Grete", "relationship", ["aunt", "grete"]),
        ("Cashews - I mean walnuts. Allergic.", "Cashews", "walnuts", "constraint", ["walnut"]),
    ],
)
def test_a_correction_then_what_the_word_is_gives_the_fact(
    text: str, heard: str, meant: str, category: str, tokens: list[str]
) -> None:
    result = default_hybrid_extractor().extract(text)
    assert result.correction is not None
    assert (result.correction.heard, result.correction.meant) == (heard, meant)
    facts = [f.text.lower() for f in result.facts if f.category == category]
    assert any(all(t in fact for t in tokens) for fact in facts), result.facts
    assert not any(heard.lower() in fact for fact in facts)


def test_a_denial_running_on_in_lower_case_is_no_correction() -> None:
    result = default_hybrid_extractor().extract(
        "not a horror person. at all. watched one once and never again"
    )
    assert result.correction is None


@pytest.mark.parametrize(
    "text",
    [
        "Let's keep chasing our goals and cheering each other on!",
        "Thanks, Ana! Let's continue supporting each other through all of it.",
        "We're helping with resume building at the library on Saturdays.",
    ],
)
def test_cheering_on_resumes_no_conversation(text: str) -> None:
    assert default_hybrid_extractor().extract(text).command is None


@pytest.mark.parametrize(
    "text",
    [
        "can we dive back into the bathroom remodel stuff?",
        "where were we on the wedding budget? let's keep going with that",
    ],
)
def test_a_conversation_named_is_resumed(text: str) -> None:
    assert default_hybrid_extractor().extract(text).command is Command.RESUME_THREAD


@pytest.mark.parametrize(
    "text",
    [
        "keep your replies short",
        "when you answer me, keep it brief",
        "oh and in general, when you reply, keep it concise, I read on my phone",
    ],
)
def test_keeping_every_answer_short_is_a_standing_instruction(text: str) -> None:
    facts = [f.text.lower() for f in extract(text).facts if f.category == "constraint"]
    assert any("keep" in fact and "answers" in fact or "replies" in fact for fact in facts), facts


@pytest.mark.parametrize("text", ["keep it short, I'm in a rush", "keep it simple for the kids"])
def test_keeping_one_answer_short_is_no_instruction(text: str) -> None:
    assert extract(text).facts == ()
