"""A job begun is who the user is now; a dash stands for a note's colon; a dislike said as
what a thing never does for the user; a report the assistant wrote down wrong is said again
with the meant word; a pet named as it arrived; someone else's word is not the user's."""

import pytest

from memmesh.extraction import Command
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.rules import extract as extract_by_rules
from memmesh.extraction.text import normalize


def _facts(text: str) -> list[tuple[str, str]]:
    return [(f.category, f.text) for f in default_hybrid_extractor().extract(text).facts]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("I just started a new job as a paramedic in April.", "User is a paramedic."),
        (
            "Two weeks ago I start new job at Bosch, as software tester.",
            "User is a software tester.",
        ),
        ("i began at the city library as a archivist last month", "User is an archivist."),
    ],
)
def test_a_job_begun_is_the_users_job(text: str, fact: str) -> None:
    assert _facts(text) == [("identity", fact)]


@pytest.mark.parametrize("text", ["I started cycling as a teenager", "we started as neighbours"])
def test_something_else_begun_is_no_job(text: str) -> None:
    assert [c for c, _ in _facts(text) if c == "identity"] == []


def test_training_with_the_i_unsaid_is_the_users_pursuit() -> None:
    assert _facts("Training for the Lisbon half marathon.") == [
        ("identity", "User is training for the Lisbon half marathon.")
    ]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Landlady — Mrs. Ferreira.", ("relationship", "User's landlady is Mrs. Ferreira.")),
        ("Olives — never.", ("preference", "User doesn't like olives.")),
        ("Anchovies: hard no.", ("preference", "User doesn't like anchovies.")),
    ],
)
def test_a_dash_or_a_flat_refusal_is_a_note(text: str, fact: tuple[str, str]) -> None:
    assert _facts(text) == [fact]


@pytest.mark.parametrize("text", ["Dentist - Friday.", "Dentist: Friday.", "Flew home - tired."])
def test_a_dash_that_tells_when_or_joins_clauses_is_no_note(text: str) -> None:
    assert _facts(text) == []


@pytest.mark.parametrize(
    ("text", "obj"),
    [
        ("Opera has never done a thing for me.", "opera"),
        ("Reality shows do absolutely nothing for me.", "reality shows"),
        ("You will never, ever catch me at a rave.", "rave"),
    ],
)
def test_what_a_thing_never_does_for_the_user_is_a_dislike(text: str, obj: str) -> None:
    facts = _facts(text)
    assert len(facts) == 1 and facts[0][0] == "preference" and obj in facts[0][1].lower()


def test_my_own_thing_doing_nothing_for_me_is_no_taste() -> None:
    assert [c for c, _ in _facts("my commute does nothing for me") if c == "preference"] == []


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "wait, you put my son's name down as Theo, but it's Leo, L-E-O",
            ("relationship", "User has a son named Leo."),
        ),
        (
            "earlier you put me down as living in Dallas, but it's Dublin, I've been here years",
            ("identity", "User lives in Dublin."),
        ),
        ("It's Lagos, not Laos, where I grew up.", ("identity", "User grew up in Lagos.")),
        ("Porto, not Prato. Home's Porto.", ("identity", "User lives in Porto.")),
    ],
)
def test_what_the_assistant_wrote_down_wrong_is_said_again_put_right(
    text: str, fact: tuple[str, str]
) -> None:
    result = default_hybrid_extractor().extract(text)
    assert result.command is Command.CORRECTION
    assert [(f.category, f.text) for f in result.facts] == [fact]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("We took in a scruffy terrier called Pip on Sunday.", "User has a terrier named Pip."),
        (
            "we got a puppy last week a tiny poodle we named um noodle",
            "User has a poodle named Noodle.",
        ),
    ],
)
def test_a_pet_named_as_it_arrived_is_the_users(text: str, fact: str) -> None:
    assert _facts(text) == [("relationship", fact)]


def test_someone_elses_word_after_a_fact_is_not_the_users() -> None:
    assert _facts("Woman at the gym: gluten-free for ten years, she says.") == []
    assert _facts("I'm allergic to kiwi, my doctor says.") == [
        ("constraint", "User is allergic to kiwi.")
    ]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("my names petra", "my name's petra"),
        ("You will never, ever see me there.", "You will never ever see me there."),
        ("um so like cycling is my thing", "cycling is my thing"),
    ],
)
def test_transcript_spellings_and_emphasis_are_read_plainly(text: str, said: str) -> None:
    assert normalize(text) == said


def test_a_months_challenge_is_time_bound() -> None:
    assert _facts("I'm doing Veganuary so no cheese for me.") == []


def test_a_usual_order_is_a_preference() -> None:
    assert _facts("Flat white, extra hot. My usual.") == [
        ("preference", "User's go-to is Flat white.")
    ]


def test_a_topic_named_first_frames_the_taste() -> None:
    assert _facts("For dessert I love tiramisu, it is my favourite since always.") == [
        ("preference", "User loves tiramisu.")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Honestly nothing beats an hour on hold with my bank. Love that for me.",
        "I'm such a fan of queueing at the post office, truly the highlight of my week.",
    ],
)
def test_praise_of_an_ordeal_is_sarcasm(text: str) -> None:
    assert _facts(text) == []


def test_an_ordeal_spared_is_no_sarcasm() -> None:
    facts = _facts("I love cycling to work, no traffic jams at all")
    assert len(facts) == 1 and "cycling" in facts[0][1]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Kids: Nia (8), Kofi (5).", ["Nia", "Kofi"]),
        ("my brothers are Ali, Omar and Yusuf", ["Ali", "Omar", "Yusuf"]),
    ],
)
def test_a_list_of_names_split_by_commas_is_one_fact_each(text: str, names: list[str]) -> None:
    facts = [t for c, t in _facts(text) if c == "relationship"]
    assert len(facts) == len(names) and all(n in f for n, f in zip(names, facts, strict=True))


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Still a Celtic supporter, sadly.", ("preference", "User is a Celtic supporter, sadly.")),
        ("Oh, and distances in kilometres, always.", None),
        (
            "What do I do for a living? Nursing - mostly night shifts.",
            ("identity", "User works in Nursing mostly night shifts."),
        ),
        ("I ring my gran, Odette, over in Lyon every week.", None),
    ],
)
def test_notes_said_without_their_subject(text: str, fact: tuple[str, str] | None) -> None:
    facts = _facts(text)
    if fact is not None:
        assert facts == [fact]
    else:
        assert len(facts) == 1


def test_a_person_told_twice_is_one_fact() -> None:
    assert _facts("every friday I call my aunt Marisol, she's 88 and still gardening") == [
        ("relationship", "User has an aunt named Marisol, who is 88 and still gardening.")
    ]


def test_emphasis_after_a_note_is_no_fact_of_its_own() -> None:
    assert len(_facts("Aisle seat. Every flight. Non-negotiable.")) == 1


@pytest.mark.parametrize(
    "text",
    [
        "resume the podcast from where it stopped",
        "delete that message to my landlord",
        "pause the timer and reset it",
    ],
)
def test_a_devices_things_are_no_memory_command(text: str) -> None:
    assert default_hybrid_extractor().extract(text).command is None


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("walk me through what you think you know about me", Command.RECALL_SUMMARY),
        ("go on then, what's in there about me?", Command.RECALL_SUMMARY),
        ("Just go full amnesia on me, please.", Command.FORGET_EVERYTHING),
        ("this call, just pretend it never happened", Command.FORGET_THREAD),
        ("Enough about my knee. Let it go.", Command.DO_NOT_MENTION),
        ("That's off the books for me, don't file it.", Command.DO_NOT_STORE),
    ],
)
def test_memory_commands_in_new_wordings(text: str, command: Command) -> None:
    assert default_hybrid_extractor().extract(text).command is command


def test_the_best_thing_ever_is_a_taste_and_an_ordeal_so_praised_is_not() -> None:
    assert _facts("Honestly, mango lassi is the best thing ever invented.") == [
        ("preference", "User loves mango lassi.")
    ]
    assert _facts("queueing is the best thing ever") == []


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("my husband is called Idris and we have one son, Bilal, he is six", ["Idris", "Bilal"]),
        ("so my wife is nkechi and weve got a dog called biscuit", ["Nkechi", "Biscuit"]),
        ("my dad Tomasz picks up my daughter Zofia after school", ["Tomasz", "Zofia"]),
    ],
)
def test_every_person_named_in_a_turn_is_kept(text: str, names: list[str]) -> None:
    facts = [t.lower() for c, t in _facts(text) if c == "relationship"]
    assert len(facts) == len(names)
    assert all(any(n.lower() in f for f in facts) for n in names)


def test_a_figure_of_speech_about_someone_named_is_no_second_fact() -> None:
    assert _facts("my uncle rafael hes basically my second dad") == [
        ("relationship", "User has an uncle named Rafael.")
    ]


def test_a_place_before_a_pronoun_is_no_name() -> None:
    assert [t for c, t in _facts("tall mike at the pool hes my swim coach") if "Pool" in t] == []


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Had sushi last night. Still vegetarian, for the record.", "User is vegetarian."),
        ("Ferry times to Arranmore? Live there.", "User lives in Arranmore."),
        ("signed the lease today so yeah Galway's home now", "User lives in Galway."),
        ("Back from Nan Olive's birthday. Shattered.", "User has a nan named Olive."),
    ],
)
def test_facts_said_beside_the_days_news(text: str, fact: str) -> None:
    assert [t for _, t in _facts(text)] == [fact]


def test_that_is_home_names_the_place_said_before() -> None:
    facts = extract_by_rules("we got the keys to the flat in Dundee today, so that's home now")
    assert [f.text for f in facts.facts] == ["User lives in Dundee."]


@pytest.mark.parametrize(
    "text",
    [
        "Sold the car and, like I said, looking at bikes now. Tricky but fun. Finally doing it.",
        "Don't let the setbacks get you down, keep going!",
        "Mind if I ask how the new job is treating you?",
        "Great catching up, let's talk again soon.",
        "Hey! Since we last spoke I started pottery classes.",
    ],
)
def test_talk_between_friends_is_no_memory_command(text: str) -> None:
    assert default_hybrid_extractor().extract(text).command is None


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        (
            "I am Kenta, builder of boats, and I live in Kobe.",
            ["User's name is Kenta.", "User is a builder of boats.", "User lives in Kobe."],
        ),
        ("I am retired engineer of railways.", ["User is a retired engineer of railways."]),
        ("we have one cat, Miso, she is nine", ["User has a cat named Miso."]),
        ("i hate camping like the idea of sleeping on the ground", ["User hates camping."]),
    ],
)
def test_jobs_beside_names_retired_jobs_pets_counted_and_run_on_likes(
    text: str, facts: list[str]
) -> None:
    assert [t for _, t in _facts(text)] == facts


def test_one_person_is_one_relationship_fact_in_a_turn() -> None:
    facts = _facts("my uncle Bongani taught me to fish, he's also my godfather")
    assert facts == [("relationship", "User has an uncle named Bongani.")]
