"""Chat between friends is full of words that sound like facts and are not: the listener
called by name, praise for what was just shown, how one is doing, a tag question, a day's
event, what someone else says. The durable facts said beside them still come through."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.learned.empty_clauses import denies_a_condition
from memmesh.extraction.model import Command
from memmesh.extraction.text import normalize, split_clauses


def facts_of(text: str) -> list[str]:
    return [f.text for f in default_hybrid_extractor().extract(text).facts]


@pytest.mark.parametrize(
    "turn",
    [
        "Yeah, Caroline. Totally agree.",
        "Hey Gina! Good to see you too.",
        "Woohoo Melanie!",
        "Thanks, Mel!",
        "Love the necklace, any special meaning to it?",
        "Love all the details, you really got the light.",
        "Thanks, Caroline. It was tough, but I'm doing ok.",
        "Music's amazing, isn't it?",
        "Woohoo Melanie! I passed the adoption agency interviews last Friday!",
        "Maybe ADHD? Never diagnosed.",
        "so my friend was saying that if you're lactose intolerant you can still eat hard cheese",
        "Love and acceptance should be everyone's right.",
        "So cute! I love your turtles so much!",
        "I couldn't agree more!",
        "I am as well!",
        "Max was truly awesome.",
        "the story was so gripping and the actors were great",
        "I'm getting people together to chat about this",
        "I'm working on a new project",
        "I may have found a job at a tech company I like",
        "Sounds fab! Seattle is definitely a great and colorful city.",
        "Yeah, birds are amazing!",
        "Barcelona sounds awesome!",
        "Sorry to hear that. Allergies can be tough.",
        "Love sure does bring us joy, huh?",
        "Garlic is indeed delicious.",
        # A short topic beside its hedge, a time-bound state, wondering, a request behind its
        # courtesy, what someone unnamed keeps saying.
        "The spicy food, maybe I like it a little, it depends of the day",
        "podcasts are fine. ish.",
        "Working from Lisbon till the 20th.",
        "I've been wondering whether I'm actually an introvert",
        "Please you write for me a short message to say sorry, I am late for the meeting.",
        "my friend from yoga was telling me her husband just got diagnosed with celiac",
        "I went shopping with my mom, Sunday.",
        "I stayed with my aunt, London.",
        # A clause that opens on a past verb tells an event; "me and him" is no one by name.
        "Missed the bus again.",
        "got stung by a wasp at the picnic",
        "me and him are together at the office today",
    ],
)
def test_talk_that_holds_no_durable_fact_gives_none(turn: str) -> None:
    assert facts_of(turn) == []


@pytest.mark.parametrize(
    ("turn", "kept", "left_out"),
    [
        # The name called out goes; the fact said after it stays.
        ("Thanks, Mel! I'm allergic to penicillin.", "penicillin", "Mel"),
        # "because of" is a phrase of the clause, not a clause of its own, and the day said
        # first makes the hospital stay an event.
        (
            "Last week I was in hospital because of asthma attack, my asthma is very bad since "
            "childhood",
            "asthma is very bad",
            "hospital",
        ),
        (
            "My heart is belonging to Liverpool football club since I am small boy",
            "Liverpool",
            "boy",
        ),
        ("Sensei Hiroshi is my karate teacher already eight years", "Hiroshi", "Already"),
        ("i always grab the window seat when i fly, aisle seats drive me nuts", "window", "aisle"),
        ("I'm doing a PhD in chemistry", "PhD in chemistry", "ok"),
        # An opinion of one's own is kept; one of a thing, said of no one, is not.
        ("jazz is my favorite, and birds are amazing", "jazz", "birds"),
        ("my mom is amazing", "mom", "birds"),
        # A name set off by commas after the role that ends a clause names that person; a
        # place or a day at the end of the sentence does not.
        ("asking for my dad, Ferdinand, he's turning seventy", "Ferdinand", "seventy"),
        ("is my physio, Dr Anand, I see her every Tuesday", "Anand", "Tuesday"),
        # Asked for good, the request is a standing instruction.
        ("Please you write to me always in simple English", "simple", "sorry"),
        # A present verb or a condition got tells what holds, whatever the first word looks
        # like; the one a user is married to is someone in particular in any case.
        ("Crowded beaches are my personal hell, I'll take anywhere else", "beaches", "anywhere"),
        ("got ADHD, so bullet points, not walls of text, please", "ADHD", "please"),
        ("Tomas and I have been married twelve years", "Tomas", "ok"),
        # A phrase that places the fact before it in time is no fact alone.
        ("I'm retired now, finally, after thirty years of teaching", "retired", "thirty"),
        ("yeah so me and uh oksana we've been married since two thousand nine", "oksana", "uh"),
    ],
)
def test_the_durable_fact_beside_the_talk_is_kept_alone(
    turn: str, kept: str, left_out: str
) -> None:
    facts = facts_of(turn)
    assert any(kept in fact for fact in facts), facts
    assert not any(left_out in fact for fact in facts), facts


def test_a_name_called_out_is_left_out_but_not_a_correction_word() -> None:
    assert "Caroline" not in normalize("Yeah, Caroline. Totally agree.")
    assert "Mel" not in normalize("Thanks, Mel! I'm allergic to penicillin.")
    assert "Tuesday" in normalize("Thursday, sorry, Tuesday")
    assert "Priya" in normalize("hey, it's Priya here")


def test_a_question_tag_makes_the_whole_sentence_a_question() -> None:
    clauses = split_clauses(normalize("Music's amazing, isn't it?"))
    assert all(clause.is_question for clause in clauses)
    plain = split_clauses(normalize("I love jazz, it relaxes me."))
    assert not any(clause.is_question for clause in plain)


@pytest.mark.parametrize(
    ("clause", "denied"),
    [
        ("Never diagnosed", True),
        ("I was never formally diagnosed", True),
        ("diagnosed with celiac at twelve", False),
    ],
)
def test_never_diagnosed_is_no_condition(clause: str, denied: bool) -> None:
    assert denies_a_condition(clause) is denied


@pytest.mark.parametrize(
    "turn",
    [
        "ugh forget it i just dropped my phone in the sink",
        "man i wish i could just forget this whole week honestly",
        "wait, can you even remember stuff between chats or do you reset every time?",
        "How I can delete my account from Instagram? Is very complicated.",
        "can you remove the second paragraph from this doc, it's rambling",
        "my mom keeps saying i should remember everything she tells me lol",
        "My mother always told us: never bring up money at the dinner table.",
    ],
)
def test_words_of_memory_that_set_nothing_give_no_command(turn: str) -> None:
    assert default_hybrid_extractor().extract(turn).command is None


@pytest.mark.parametrize(
    "turn",
    [
        "so please stop to suggest me wine with everything",
        "Can we retire the jokes about my height? Thanks.",
        "could you maybe ease off mentioning my divorce, it catches me off guard",
    ],
)
def test_asking_a_subject_be_left_alone_is_do_not_mention(turn: str) -> None:
    assert default_hybrid_extractor().extract(turn).command is Command.DO_NOT_MENTION


@pytest.mark.parametrize(
    "turn", ["you should drop the jokes about cats in your set", "I need to stop to think about it"]
)
def test_advice_and_a_pause_are_no_do_not_mention(turn: str) -> None:
    assert default_hybrid_extractor().extract(turn).command is None


@pytest.mark.parametrize(
    "turn", ["please forget what I said about my ex", "can you forget my address?"]
)
def test_asked_plainly_forgetting_is_still_a_command(turn: str) -> None:
    assert default_hybrid_extractor().extract(turn).command is Command.FORGET


@pytest.mark.parametrize(
    ("turn", "heard", "meant"),
    [
        ("you've got my cat down as Pickle, it's Pixel, like on a screen", "Pickle", "Pixel"),
        ("You wrote 'there'. Should be 'their'.", "there", "their"),
        ("Saved as 'Dave'. It's Dev. My flatmate.", "Dave", "Dev"),
        (
            "you've got me down as vegetarian, I'm pescatarian, I eat fish",
            "vegetarian",
            "pescatarian",
        ),
        # A word spelled out says the turn is about how a word is written.
        ("Zhou, not Joe. Z-H-O-U.", "Joe", "Zhou"),
    ],
)
def test_what_was_written_down_then_the_word_meant_is_a_correction(
    turn: str, heard: str, meant: str
) -> None:
    result = default_hybrid_extractor().extract(turn)
    assert result.command is Command.CORRECTION
    assert result.correction is not None
    assert (result.correction.heard, result.correction.meant) == (heard, meant)


@pytest.mark.parametrize(
    "turn",
    [
        "you wrote the email, it's great",
        "you saved me so much time, it's amazing",
        "I like tea, not coffee",
    ],
)
def test_an_answer_or_a_contrast_is_no_correction(turn: str) -> None:
    assert default_hybrid_extractor().extract(turn).command is None


def test_a_name_spelled_out_after_its_letter_is_read_without_failing() -> None:
    facts = facts_of("My name is Ann with an E, A-N-N-E")
    assert any("Ann" in fact for fact in facts)


@pytest.mark.parametrize("turn", ["I'm not a", "it's not", "you wrote", "Saved as", "my dad,"])
def test_a_turn_cut_off_mid_sentence_is_read_without_failing(turn: str) -> None:
    result = default_hybrid_extractor().extract(turn)
    assert (list(result.facts), result.command) == ([], None)


# Words that open the shapes the extractor reads (corrections, commands, appositives, terse
# notes), to be cut off and run together in any order.
_SHAPE_WORDS = (
    "I I'm I said not no it's you wrote Saved as my dad sister Dana , . ? - : = with a K "
    "Z-H-O-U forget that remember please don't mention love the is was sorry wait scratch "
    "allergic to peanuts vegan Tuesday three hundred grams"
).split()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_SHAPE_WORDS), max_size=10))
def test_any_run_of_the_shapes_words_is_read_without_failing(words: list[str]) -> None:
    result = default_hybrid_extractor().extract(" ".join(words))
    assert all(fact.text.startswith("User") for fact in result.facts)
