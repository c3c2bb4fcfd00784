"""A fact is the user's: news of someone unnamed, what a subjectless clause goes on to say of
someone else, and a move still to come are not stored as facts about the user."""

import pytest

from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.learned.commands import _said_besides
from memmesh.extraction.markers import PLAN, SARCASM, turn_markers
from memmesh.extraction.model import Command
from memmesh.extraction.rules import turn_clauses
from memmesh.extraction.text import normalize, split_clauses


def facts_of(text: str) -> list[tuple[str, str]]:
    return [(f.text, f.category) for f in default_hybrid_extractor().extract(text).facts]


@pytest.mark.parametrize(
    "text",
    [
        # News of someone unnamed, a move still to come.
        "so um a friend of a friend is like super allergic to peanuts and she almost died",
        "some guy at my gym used to be a monk",
        "this woman in my choir is a retired judge",
        "we're moving to Porto in March, finally!",
        # A terse request names what it wants made.
        "Recipe for dal.",
        "Shift schedule template.",
        "Packing list for Iceland.",
        # A grand label said in jest, a supposition.
        "I'm basically a gourmet chef now, I microwaved soup without it exploding",
        "honestly I'm basically fluent in French now, I can say croissant and merci",
        "because clearly I'm a world-class chef, I only set off the smoke alarm three times",
        "let's say I couldn't eat gluten anymore, what would I even have for breakfast",
        # Someone else's loss, a broken thing.
        "my colleague's aunt passed away, sending flowers",
        "my laptop died on Monday",
    ],
)
def test_what_is_no_fact_of_the_users_gives_none(text: str) -> None:
    assert facts_of(text) == []


def test_a_subjectless_clause_goes_on_about_whom_the_clause_before_it_is_about() -> None:
    said = "okay so my dad's name is Babajide, he's retired now, used to be a civil engineer"
    assert all(
        "engineer" not in text or category == "relationship" for text, category in facts_of(said)
    )
    # After a clause of the user's own, the same shape is the user's.
    assert any("teacher" in text for text, _ in facts_of("I'm a nurse, used to be a teacher"))


def test_a_fact_joined_with_what_follows_it_is_still_the_users_own_words() -> None:
    result = default_hybrid_extractor().extract(
        "forget the thing about my knee that's healed now but um i do still have asthma so keep that"
    )
    assert result.command is Command.FORGET
    assert [f.category for f in result.facts if "asthma" in f.text] == ["constraint"]


def test_moving_about_is_no_plan_and_a_verb_after_a_pet_is_no_name() -> None:
    said = "we live on a narrowboat and our cat rides on the roof while we're moving"
    clauses = turn_clauses(normalize(said))
    assert not any(PLAN in markers for markers in turn_markers(clauses))
    assert not any("Rides" in text for text, _ in facts_of(said))


@pytest.mark.parametrize(
    "text, favourite",
    [
        (
            "I went to a tribute concert of Fairuz, she is my favorite singer",
            "User's favorite singer is Fairuz.",
        ),
        (
            "anyway I really miss doubles, they're my favorite breakfast ever",
            "User's favorite breakfast ever is doubles.",
        ),
        # How long it has been so is no part of what it is; a pronoun opening a sentence
        # looks back into the one before.
        (
            "queued four hours for Wet Leg tickets. they've been my favorite band since college",
            "User's favorite band is Wet Leg.",
        ),
        (
            "rewatched Spirited Away again, it's been my favorite film for twenty years",
            "User's favorite film is Spirited Away.",
        ),
    ],
)
def test_a_favourite_said_with_a_pronoun_names_what_the_clause_before_ended_on(
    text: str, favourite: str
) -> None:
    facts = [fact for fact, _ in facts_of(text)]
    assert favourite in facts
    # The clause the pronoun looked back into is no fact of its own.
    assert len(facts) == 1


def test_a_favourite_with_nothing_to_stand_for_is_no_fact() -> None:
    assert not any("favorite" in fact for fact, _ in facts_of("it's my favorite singer"))


def test_a_spoken_ex_wife_is_a_role_and_a_filler_like_is_no_liking() -> None:
    facts = facts_of("my uh ex wife jolene and i share custody of the kids")
    assert ("User has an ex wife named Jolene.", "relationship") in facts
    said = (
        "we had the team thing at the bowling alley tonight and i like didnt drink cause im sober"
    )
    assert not any("likes" in fact for fact, _ in facts_of(said))


def test_a_joke_covers_the_rest_of_its_sentence_only() -> None:
    said = "I'm basically a gourmet chef now, I can boil an egg. I'm vegetarian."
    markers = turn_markers(turn_clauses(normalize(said)))
    assert [SARCASM in found for found in markers] == [True, True, False]


@pytest.mark.parametrize(
    "text, fact",
    [
        ("my mom passed away last year", "User's mom passed away."),
        ("Mum died in 2020. Her name was Ellen.", "User's mum, Ellen, died."),
        ("my dad Alberto passed away in May", "User's dad, Alberto, passed away."),
        ("my grandma passed, she was 94", "User's grandma passed."),
    ],
)
def test_a_loss_in_the_family_is_a_lasting_fact_without_its_date(text: str, fact: str) -> None:
    assert facts_of(text) == [(fact, "relationship")]


@pytest.mark.parametrize(
    "text, facts",
    [
        (
            "my kids are Zainab and Idris, they're 9 and 6",
            ["User has a kid named Zainab.", "User has a kid named Idris."],
        ),
        (
            "our dogs are called Salt and Pepper",
            ["User has a dog named Salt.", "User has a dog named Pepper."],
        ),
        (
            "Mum's Rosa, dad's Kofi, sister's Abena.",
            ["User's mum is Rosa.", "User's dad is Kofi.", "User has a sister named Abena."],
        ),
        (
            "I have two kids, Maya and Leo",
            ["User has a kid named Maya.", "User has a kid named Leo."],
        ),
    ],
)
def test_each_person_named_in_a_list_is_a_fact_of_their_own(text: str, facts: list[str]) -> None:
    assert [fact for fact, _ in facts_of(text)] == facts


def test_a_concession_is_a_connector_not_part_of_the_fact() -> None:
    said = "dreading the dentist tomorrow, even though I've been a dental nurse for ten years"
    assert any("dental nurse" in fact for fact, _ in facts_of(said))


def test_a_statement_before_a_memory_command_in_one_sentence_is_kept() -> None:
    said = "I'm a nurse so I use you on the ward, please don't bring up old chats unless I ask"
    kept = _said_besides(split_clauses(normalize(said)))
    assert kept.startswith("I'm a nurse")
    assert "bring up" not in kept


@pytest.mark.parametrize(
    "text, fact",
    [
        ("make me a road trip mix, I'm a petrolhead through and through", "User is a petrolhead."),
        ("I'm a bit of a bibliophile", "User is a bibliophile."),
    ],
)
def test_one_word_for_a_devotee_is_a_taste(text: str, fact: str) -> None:
    assert (fact, "preference") in facts_of(text)


def test_a_when_before_a_subject_after_and_starts_a_clause() -> None:
    said = "I've always hated loud bars and last night they dragged me to one anyway"
    clauses = [c.text for c in turn_clauses(normalize(said))]
    assert clauses[0] == "I've always hated loud bars"


@pytest.mark.parametrize(
    "text, fact",
    [
        ("Ferry times for Stornoway? I live there.", "User lives in Stornoway."),
        ("any good bakeries in Leipzig? we moved here two years ago", "User lives in Leipzig."),
        ("Can you answer in Tagalog? It's my first language", "User's first language is Tagalog."),
        (
            "what should I cook for Diwali? my parents are from Kerala",
            "User's parents are from Kerala.",
        ),
    ],
)
def test_a_place_or_language_a_question_named_is_the_users(text: str, fact: str) -> None:
    assert fact in [found for found, _ in facts_of(text)]


def test_a_command_in_one_clause_of_a_sentence_is_heard_and_the_rest_kept() -> None:
    said = "I'm a nurse so I use you on the ward, please don't bring up old chats unless I ask"
    result = default_hybrid_extractor().extract(said)
    assert result.command is Command.RECALL_ONLY_IF_ASKED
    assert "User is a nurse." in [f.text for f in result.facts]


def test_news_of_someone_else_in_a_commands_words_is_no_command() -> None:
    said = "my sister never stops talking about her wedding"
    assert default_hybrid_extractor().extract(said).command is None


@pytest.mark.parametrize(
    "text, sarcastic",
    [
        ("Oh great, I just love sitting in traffic for two hours", True),
        ("oh sure, I adore filling in forms, best part of my week", True),
        ("oh yeah, I'm vegan by the way", False),
        ("oh yeah, and I love jazz", False),
    ],
)
def test_a_sarcastic_opener_sets_the_tone_of_what_it_mocks(text: str, sarcastic: bool) -> None:
    assert (facts_of(text) == []) is sarcastic


@pytest.mark.parametrize(
    "text",
    [
        "please keep this between us and not end up in your notes: I'm job hunting",
        "I sit at the back and not hearing a word anyone says is normal for me",
    ],
)
def test_two_things_joined_by_and_not_are_no_correction(text: str) -> None:
    assert default_hybrid_extractor().extract(text).correction is None


def test_keeping_it_all_quiet_is_no_remember_everything() -> None:
    said = "just keep it all quiet unless I ask you about it"
    assert default_hybrid_extractor().extract(said).command is not Command.REMEMBER_EVERYTHING


def test_a_sentence_opening_like_is_a_filler_and_those_before_a_noun_names_it() -> None:
    said = "um so like i really love those old kung fu films"
    assert any("kung fu films" in fact for fact, _ in facts_of(said))


def test_a_span_of_more_days_bounds_its_state() -> None:
    assert facts_of("im on these antibiotics for like seven more days so no wine") == []


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # What someone of the user's is or likes is a fact of the relationship.
        ("my mother is a nurse in Accra", "relationship"),
        ("my husband loves hiking", "relationship"),
        # A mother tongue is a language the user speaks, no mother of theirs.
        ("my mother tongue is Tigrinya, so my English is a bit odd sometimes", "identity"),
        ("my native language is Amharic", "identity"),
    ],
)
def test_a_fact_of_someone_of_the_users_is_a_relationship_and_a_mother_tongue_is_not(
    text: str, category: str
) -> None:
    assert [c for _, c in facts_of(text)] == [category], facts_of(text)


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # An intensifier makes a quality of the word before "person": a trait.
        ("I'm a very private person", "identity"),
        ("I'm a pretty patient guy", "identity"),
        # A thing or a team before "person" or "guy" is a taste, a capital "Super" included.
        ("I'm a cat person", "preference"),
        ("I'm a Chennai Super Kings guy", "preference"),
    ],
)
def test_a_person_of_a_quality_is_a_trait_and_of_a_thing_a_taste(text: str, category: str) -> None:
    assert [c for _, c in facts_of(text)] == [category], facts_of(text)


def test_a_fear_the_head_reads_as_a_taste_is_a_limit() -> None:
    facts = facts_of("i'm like deathly afraid of bridges like i can't even drive over one")
    assert [c for _, c in facts] == ["constraint"], facts


def test_what_the_user_has_always_been_more_of_a_person_for_is_a_taste() -> None:
    assert facts_of("I've always been more of a cat person.") == [
        ("User is a cat person.", "preference")
    ]
