"""Terse notes ("husband: Omer.") are heard as the sentences they stand for."""

import pytest

from memmesh.extraction import extract
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.terse import spell_out_notes


@pytest.mark.parametrize(
    "note, spelled",
    [
        ("husband: Omer.", "my husband is Omer."),
        ("Wife's name: Ingrid.", "my wife's name is Ingrid."),
        ("fave poet: Rumi", "my favorite poet is Rumi"),
        ("Two kids: Maya and Leo.", "my two kids are Maya and Leo."),
        ("opera: no thanks, never", "I don't like opera"),
        ("Dislike: open-plan offices.", "I dislike open-plan offices."),
        ("Allergies: peanuts and shellfish.", "I'm allergic to peanuts and shellfish."),
        (
            "Fav film: Paddington 2. Fav food: pho.",
            "my favorite film is Paddington 2. my favorite food is pho.",
        ),
        # A clause that leaves its "I" unsaid.
        ("diabetic since age nine.", "I'm diabetic since age nine."),
        (
            "Dentist today. Still terrified of needles, always have been.",
            "Dentist today. I'm still terrified of needles, always have been.",
        ),
        ("back from Oslo. still hate the cold.", "back from Oslo. I still hate the cold."),
        ("classic night owl, always have been", "I'm a classic night owl, always have been"),
        ("no fan of cats.", "I'm no fan of cats."),
        ("live in Denver now.", "I live in Denver now."),
        ("work nights as a nurse.", "I work nights as a nurse."),
        ("scared of heights, always was", "I'm scared of heights, always was"),
        ("I love dogs, still hate cats", "I love dogs, I still hate cats"),
    ],
)
def test_a_note_or_a_clause_without_its_i_is_spelled_out(note: str, spelled: str) -> None:
    assert spell_out_notes(note) == spelled


@pytest.mark.parametrize(
    "text",
    [
        "if I had wings: Lisbon, daily.",
        "in another life: jazz pianist.",
        "Question: what's the weather like",
        "Note: I'm out tomorrow",
        "Resume: tax return.",
        "the thing is: I hate mornings",
        "I love three things: tea, rain and books",
        "no colon at all here",
        # Requests, events and clauses of someone else get no "I".
        "play some jazz",
        "never mind",
        "just got back from Nairobi",
        "my sister? allergic to cats",
        "I work as an interpreter, mostly in hospitals.",
        "I'm an illustrator, mostly children's books",
        "the guy next door is a huge fan of opera",
        "she's allergic to cats",
        "really?",
    ],
)
def test_frames_sentences_and_clauses_of_others_are_left_as_they_are(text: str) -> None:
    assert spell_out_notes(text) == text


@pytest.mark.parametrize(
    "text, words",
    [
        ("husband: Omer.", ("husband", "omer")),
        ("Dentist: Dr Lindqvist.", ("dentist", "lindqvist")),
        ("fave poet: Rumi", ("poet", "rumi")),
        ("mushrooms: hard pass.", ("mushrooms", "like")),
        ("Best friend: Ife, since primary school.", ("friend", "ife")),
    ],
)
def test_a_note_becomes_the_fact_its_sentence_gives(text: str, words: tuple[str, ...]) -> None:
    facts = extract(text).facts
    assert len(facts) == 1
    assert all(word in facts[0].text.lower() for word in words)


def test_a_note_of_a_wish_gives_no_fact() -> None:
    assert extract("in another life: jazz pianist.").facts == ()


@pytest.mark.parametrize(
    "text, spelled",
    [
        ("Green tea, always.", "I always want green tea."),
        ("Extra hot sauce on everything, please.", "I want extra hot sauce on everything, please."),
        ("Not a fan of musicals.", "I'm not a fan of musicals."),
        ("Linux user.", "I use Linux."),
        ("Rebooked. Cane user, so step-free routes.", "Rebooked. I use Cane. So step-free routes."),
        ("No mushrooms. Ever.", "I never want mushrooms."),
    ],
)
def test_a_bare_standing_choice_is_spelled_out(text: str, spelled: str) -> None:
    assert spell_out_notes(text) == spelled


@pytest.mark.parametrize(
    "text",
    [
        "Sure, always.",
        "Thanks, always.",
        "Same thing, always.",
        "Power user.",
        "Not now.",
        # An instruction already says what it asks; spelled as a wish it would lose its verb.
        "use the 24-hour clock with me, always",
    ],
)
def test_replies_and_how_much_someone_uses_things_are_no_choice(text: str) -> None:
    assert spell_out_notes(text) == text


@pytest.mark.parametrize(
    "text, word",
    [
        ("Not into horror films.", "horror"),
        ("Mac user.", "mac"),
        ("No cilantro. Ever.", "cilantro"),
    ],
)
def test_a_bare_standing_choice_becomes_a_fact(text: str, word: str) -> None:
    facts = default_hybrid_extractor().extract(text).facts
    assert len(facts) == 1 and word in facts[0].text.lower()


@pytest.mark.parametrize(
    "text, words",
    [
        ("Dentist today. Still terrified of needles, always have been.", ("needles",)),
        ("new insulin pump arrived today. diabetic since age nine.", ("diabetic",)),
        ("back from Tromso. still hate the cold.", ("cold",)),
    ],
)
def test_an_unsaid_i_beside_a_one_off_event_still_gives_the_fact(
    text: str, words: tuple[str, ...]
) -> None:
    facts = default_hybrid_extractor().extract(text).facts
    assert len(facts) == 1
    assert all(word in facts[0].text.lower() for word in words)


@pytest.mark.parametrize(
    "note, fact",
    [
        ("PhD student, linguistics.", "User is a PhD student (linguistics)."),
        ("Half Filipino, half Scottish.", "User's background: Half Filipino, half Scottish."),
    ],
)
def test_a_fragment_completes_the_note_before_it(note: str, fact: str) -> None:
    assert [f.text for f in default_hybrid_extractor().extract(note).facts] == [fact]


@pytest.mark.parametrize(
    ("notes", "facts"),
    [
        (
            "Husband Omar, daughter Lina, dog Rufus.",
            [
                "User's circle: Husband Omar.",
                "User's circle: daughter Lina.",
                "User's circle: dog Rufus.",
            ],
        ),
        (
            "Gluten free, no dairy, ever.",
            ["User's limit: Gluten free.", "User's limit: no dairy, ever."],
        ),
    ],
)
def test_in_a_list_of_notes_a_note_with_a_fact_of_its_own_stands_alone(
    notes: str, facts: list[str]
) -> None:
    # A fragment the head sees no fact in ("ever") still completes the note before it.
    assert [f.text for f in default_hybrid_extractor().extract(notes).facts] == facts


@pytest.mark.parametrize(
    ("turn", "word"),
    [
        ("Route to the clinic. Step-free — wheelchair user.", "wheelchair"),
        ("Missed the bus again. Can't drive — epilepsy.", "epilepsy"),
    ],
)
def test_a_fragment_after_a_clause_nothing_was_kept_of_is_read_alone(turn: str, word: str) -> None:
    # Joined to a clause that gave no fact, the fragment's own fact was lost with it.
    facts = default_hybrid_extractor().extract(turn).facts
    assert [f.category for f in facts] == ["constraint"]
    assert word in facts[0].text


def test_a_capitalised_fragment_names_a_second_item() -> None:
    facts = default_hybrid_extractor().extract("Accountant, Cork.").facts
    assert not any("Accountant" in f.text and "Cork" in f.text for f in facts)


def test_a_fragment_that_limits_is_a_note_of_its_own() -> None:
    facts = default_hybrid_extractor().extract("Muslim, halal only, no alcohol in recipes.").facts
    assert [f.category for f in facts] == ["identity", "constraint", "constraint"]
    assert "halal" not in facts[0].text


def test_what_a_household_does_is_grounded_in_the_users_words() -> None:
    facts = (
        default_hybrid_extractor().extract("we live on a narrowboat, which sounds romantic").facts
    )
    assert [f.text for f in facts] == ["User's household lives on a narrowboat."]


@pytest.mark.parametrize(
    "said, spelled",
    [
        ("Coriander? Tastes like soap to me.", "Coriander tastes like soap to me."),
        ("Red wine? Gives me a migraine every time.", "Red wine gives me a migraine every time."),
        # A real question keeps its question mark.
        ("What? Sounds odd.", "What? Sounds odd."),
    ],
)
def test_a_thing_asked_then_what_it_does_is_its_subject(said: str, spelled: str) -> None:
    assert spell_out_notes(said) == spelled


@pytest.mark.parametrize(
    "said, spelled",
    [
        ("Physio at the clinic? Johanna.", "my physio at the clinic is Johanna."),
        ("My accountant? Mr. Oduya.", "my accountant is Mr. Oduya."),
        ("Cat's name? Pickle.", "my cat's name is Pickle."),
        ("Moved last year. Landlord? Tess Hart.", "Moved last year. my landlord is Tess Hart."),
        # An answer that names no one, or a question that is no role, stays as said.
        ("Therapist? Nope, not anymore.", "Therapist? Nope, not anymore."),
        ("Lawyer? Never needed one.", "Lawyer? Never needed one."),
        ("Weather? Grey.", "Weather? Grey."),
    ],
)
def test_a_role_asked_then_named_is_spelled_out(said: str, spelled: str) -> None:
    assert spell_out_notes(said) == spelled


def test_a_role_asked_then_named_becomes_a_relationship() -> None:
    facts = default_hybrid_extractor().extract("Piano teacher? Ms Castellano.").facts
    assert [f.category for f in facts] == ["relationship"]
    assert "castellano" in facts[0].text.lower()


@pytest.mark.parametrize(
    "said, spelled",
    [
        ("Captain Nibbles - don't ask - is my hamster.", "Captain Nibbles is my hamster."),
        ("Gus, believe it or not, is our tortoise.", "Gus is our tortoise."),
        # An aside that says who the name is stays; so does a clause of no name.
        ("Ruth, my aunt, is my lodger now.", "Ruth, my aunt, is my lodger now."),
        ("Anyway, long story, is my order in?", "Anyway, long story, is my order in?"),
    ],
)
def test_an_aside_after_a_name_is_left_out(said: str, spelled: str) -> None:
    assert spell_out_notes(said) == spelled


def test_a_name_said_first_with_an_aside_gives_the_relationship() -> None:
    facts = default_hybrid_extractor().extract("Biscotti - yes, really - is my greyhound.").facts
    assert any(f.category == "relationship" and "biscotti" in f.text.lower() for f in facts)


@pytest.mark.parametrize(
    "said, spelled",
    [
        ("And Tobias? Oldest friend from school.", "And Tobias is my oldest friend from school."),
        ("Mirela? My stepmother.", "Mirela is my stepmother."),
        # A question word, or a role that goes on to say something else, stays as said.
        ("Who? My nephew.", "Who? My nephew."),
        ("Lena? My landlord told me.", "Lena? My landlord told me."),
    ],
)
def test_a_name_asked_then_placed_is_spelled_out(said: str, spelled: str) -> None:
    assert spell_out_notes(said) == spelled


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Horror movies? Hard no.", "User doesn't like horror movies."),
        ("Mayo. Absolutely not.", "User doesn't like mayo."),
        ("Raisins in cookies? Betrayal. Every time.", "User doesn't like raisins in cookies."),
        ("5:30 gym sessions. Love them.", "User loves 5:30 gym sessions."),
        ("licorice = gross.", "User doesn't like licorice."),
        ("Sparkling water > still. Always.", "User prefers sparkling water."),
        ("tea over coffee any day, no contest", "User prefers tea."),
        ("Ice cream? Mint choc chip. Always.", "User's favorite ice cream is Mint choc chip."),
        ("white chocolate? pass. always.", "User doesn't like white chocolate."),
    ],
)
def test_a_thing_and_its_verdict_said_without_a_verb_is_a_taste(text: str, fact: str) -> None:
    assert [(f.category, f.text) for f in extract(text).facts] == [("preference", fact)]


@pytest.mark.parametrize(
    "text",
    [
        "Maybe ADHD? Never diagnosed.",
        "sister came over Sunday with the kids.",
        "Honestly I'm over the moon right now, best news all year.",
        "Coffee? Sure, thanks.",
    ],
)
def test_what_only_looks_like_a_verdict_is_left_as_it_is(text: str) -> None:
    assert spell_out_notes(text) == text


@pytest.mark.parametrize(
    ("text", "places"),
    [
        ("Muslim. Accountant. Birmingham.", "Birmingham"),
        ("Welder. Rotterdam. Diabetic.", "Rotterdam"),
    ],
)
def test_every_note_of_a_terse_profile_is_kept(text: str, places: str) -> None:
    facts = default_hybrid_extractor().extract(text).facts
    assert [f.category for f in facts if places in f.text] == ["identity"], facts


@pytest.mark.parametrize(
    "text", ["Ugh. Tired. Long day.", "Monday. Dentist. Ugh.", "Fantastic. More rain. Again."]
)
def test_terse_talk_with_no_sure_fact_is_no_profile(text: str) -> None:
    assert default_hybrid_extractor().extract(text).facts == ()
