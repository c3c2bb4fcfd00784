"""Corrections of what the assistant said or wrote back, the speaker's own mid-sentence slips,
numbers said whole, quoted words, and indirect command wordings; each beside look-alikes that
must stay untouched."""

import pytest

from memmesh.extraction import Command, Correction, extract
from memmesh.extraction.commands import detect_correction
from memmesh.extraction.learned import default_hybrid_extractor
from memmesh.extraction.text import normalize


@pytest.mark.parametrize(
    "text, heard, meant",
    [
        # What the assistant said back, then the user's own word after "but (no,)".
        ("you said I work in Leeds, but no, it is Luton", "Leeds", "Luton"),
        ("you wrote three chairs but no, five", "three", "five"),
        # A bare "you said … but" needs "no", "it's" or "I said" to correct anything.
        ("you said Bern, but it's Basel", "Bern", "Basel"),
        ("you read back two litres, I said two pints", "litres", "pints"),
        # The frame the assistant's version was put in is no part of the word misheard.
        ("you've put that I'm a plumber, I said I'm a plasterer", "plumber", "plasterer"),
        ("you keep writing my van but it's a minibus", "van", "minibus"),
        # "you heard wrong" names no word heard.
        ("you heard wrong, I said Lucerne, not Lausanne", "Lausanne", "Lucerne"),
        ("I did say Monday, not Sunday", "Sunday", "Monday"),
        # Quote marks are not part of what was said.
        ("It is not 'Bex', it is 'Bix', the cafe", "Bex", "Bix"),
    ],
)
def test_what_the_assistant_said_back_gives_the_pair(text: str, heard: str, meant: str) -> None:
    assert extract(text).correction == Correction(heard=heard, meant=meant)


@pytest.mark.parametrize(
    "text, heard, meant",
    [
        ("no it's twelve hundred not two hundred", "two hundred", "twelve hundred"),
        ("five thousand, not five hundred.", "five hundred", "five thousand"),
        # A time said in words is one value: "six fifteen" is what was misheard, not "six".
        ("No, nine fifteen. Not six fifteen.", "six fifteen", "nine fifteen"),
        ("no i said twenty five not seventy five minutes", "seventy five", "twenty five"),
    ],
)
def test_a_number_keeps_its_multiplier(text: str, heard: str, meant: str) -> None:
    assert extract(text).correction == Correction(heard=heard, meant=meant)


@pytest.mark.parametrize(
    "text, heard, meant, kept, gone",
    [
        (
            "my sister Oona's a chemist, no sorry, a physicist",
            "chemist",
            "physicist",
            "physicist",
            "chemist",
        ),
        # A time said in words is corrected whole, its hour too.
        (
            "put it at uh six fifteen no six forty five sorry",
            "six fifteen",
            "six forty five",
            "",
            "",
        ),
        (
            "my nephew is Tobiah, no, sorry, my godson, my godson is Tobiah",
            "nephew",
            "godson",
            "godson",
            "nephew",
        ),
        # "I mean", "what am I saying", a bare "sorry" between commas take a slip back too.
        ("I'm allergic to hazelnuts, I mean cashews", "hazelnuts", "cashews", "cashews", "hazel"),
        ("my cousin lives in Porto, what am I saying, Braga", "Porto", "Braga", "Braga", "Porto"),
        ("I work as a baker, sorry, as a butcher", "baker", "butcher", "butcher", "baker"),
        ("my dog is a beagle wait no a basset hound", "beagle", "basset hound", "basset", "beagle"),
        # The slip and its sign may be sentences of their own; "correction" is a sign too.
        ("Pescatarian. Scratch that, vegan.", "Pescatarian", "vegan", "vegan", "Pescatarian"),
        ("Allergic to latex. Wait, no. Penicillin.", "latex", "Penicillin", "Penicillin", "latex"),
        ("I'm an early bird, ugh, correction, night owl", "early bird", "night owl", "owl", "bird"),
        # A bare "sorry" swaps one word for the last one said.
        ("call me on Friday, sorry, Monday", "Friday", "Monday", "", ""),
        # A phrase said again from its start changes only the word that differs.
        ("my dog Pepper, or rather my cat Pepper", "dog", "cat", "", ""),
        # A hesitation before the "no" is part of the sign, not the slip.
        ("I grew up in Porto, ah no, sorry, Braga", "Porto", "Braga", "Braga", "Porto"),
        # A bare "no" between commas swaps one name for another.
        ("My brother's name is Tom, no, Tim.", "Tom", "Tim", "Tim", "Tom"),
        ("i'm from Lyon, no, Lille", "Lyon", "Lille", "Lille", "Lyon"),
    ],
)
def test_a_slip_taken_back_mid_sentence_is_a_correction(
    text: str, heard: str, meant: str, kept: str, gone: str
) -> None:
    result = default_hybrid_extractor().extract(text)
    assert result.correction == Correction(heard=heard, meant=meant)
    if kept:
        assert any(kept in fact.text for fact in result.facts)
        assert all(gone not in fact.text for fact in result.facts)


@pytest.mark.parametrize(
    "text",
    [
        # A "no" that starts a noun phrase, or an apology that takes nothing back.
        "two coffees, no sugar please",
        "give me ten minutes, no rush",
        "I'd like tea, no sorry, I can't have caffeine",
        "we need four chairs no more",
        "you said it would be sunny, but I got soaked",
        "you said it would rain, but I'm fine",
        "you said the café was quiet, but I loved it",
        # A limit or a taste after "not".
        "my rent budget is 900 a month, not more",
        "um no, horror films are just not for me",
        # "I mean" as a filler, or before a detail of what was just said.
        "I love jazz, I mean, who doesn't",
        "my sister's visiting, I mean she's great but it's a lot",
        "I drink tea, I mean green tea mostly",
        "I'm sorry, I didn't catch that",
        "When I say the loft, I mean Harbour Studio.",
    ],
)
def test_look_alikes_of_slips_and_said_back_are_no_correction(text: str) -> None:
    result = extract(text)
    assert result.correction is None
    assert result.command is not Command.CORRECTION


@pytest.mark.parametrize(
    "text, command",
    [
        ("erase everything from this conversation about the wedding gift", Command.FORGET_THREAD),
        ("delete it all, every last detail you have on me", Command.FORGET_EVERYTHING),
        ("that's not for remembering, okay", Command.DO_NOT_STORE),
        ("don't dig past conversations up", Command.RECALL_ONLY_IF_ASKED),
        ("so, picking up where we left off on the garage conversion", Command.RESUME_THREAD),
        ("oh, that thing I said about my job, you can bin that", Command.FORGET),
        ("Money stuff: answer only if asked.", Command.PULL_ONLY),
        ("Debt stuff: on request only.", Command.PULL_ONLY),
    ],
)
def test_indirect_command_wordings_are_heard(text: str, command: Command) -> None:
    assert extract(text).command is command


@pytest.mark.parametrize(
    "text",
    [
        # Someone else's words or doings, reported.
        "my coach said off the record that the team is being sold",
        "my aunt said you should stop bringing up politics at dinner",
        "the twins are back and they won't stop talking about the zoo",
        # Everything in a place that is not this talk.
        "delete everything from this folder",
    ],
)
def test_reported_and_other_peoples_look_alikes_are_no_command(text: str) -> None:
    assert extract(text).command is None


def test_what_is_to_be_forgotten_is_no_fact_but_the_rest_of_the_turn_is() -> None:
    result = default_hybrid_extractor().extract(
        "and that bit I told you about being vegetarian, you can bin that, "
        "also my sister's name is Maren"
    )
    assert result.command is Command.FORGET
    assert all("vegetarian" not in fact.text for fact in result.facts)
    assert any("Maren" in fact.text for fact in result.facts)


def test_a_fact_beside_a_forget_of_something_else_stays() -> None:
    result = extract("forget what I said about my old flat, I'm vegetarian now by the way")
    assert result.command is Command.FORGET
    assert any("vegetarian" in fact.text for fact in result.facts)


def test_a_lower_case_transcript_corrects_a_long_name_that_differs_by_a_letter() -> None:
    # Without capitals no word shows it is a name; a long one spelled almost alike is one.
    result = extract("i live in leamington not lemington yeah leamington")
    assert result.correction == Correction(heard="lemington", meant="leamington")
    # Short words alike by chance stay a choice, and "I didn't say ..., I said ..." keeps the
    # statement with only its last word replaced.
    assert extract("i wanted a shirt not a skirt").correction is None
    denied = extract("I didn't say I'm moving to Denver, I said Denmark")
    assert denied.correction == Correction(heard="Denver", meant="Denmark")


@pytest.mark.parametrize(
    ("text", "heard", "meant", "kept"),
    [
        (
            "add um two cans of chickpeas no wait three cans",
            "two",
            "three",
            "three cans of chickpeas",
        ),
        ("I have two cats no wait three", "two", "three", "I have three cats"),
        ("Eleven — scratch that — noon.", "Eleven", "noon", "noon"),
        ("Allergic to cashews. No, pistachios.", "cashews", "pistachios", "Allergic to pistachios"),
    ],
)
def test_a_number_or_a_word_taken_back_is_put_right(
    text: str, heard: str, meant: str, kept: str
) -> None:
    correction, fact_text = detect_correction(normalize(text))
    assert correction == Correction(heard=heard, meant=meant)
    assert kept in fact_text


@pytest.mark.parametrize(
    "text",
    [
        "Coffee: black, no sugar.",
        "Muslim. No alcohol, ever.",
        "Pescatarian. No meat, fish is fine.",
        "Do you have tea? No, coffee.",
        # Between names, "no" swaps one name for one name only.
        "I went to Paris, no, London and Rome.",
        "I love Paris, no, Rome is better.",
    ],
)
def test_a_no_that_rules_something_out_takes_nothing_back(text: str) -> None:
    assert detect_correction(normalize(text))[0] is None


@pytest.mark.parametrize(
    ("text", "heard", "meant"),
    [
        ("er our dog is called biscuit not brisket biscuit", "brisket", "biscuit"),
        ("i live in leamington not lemington yeah leamington", "lemington", "leamington"),
        (
            "That's 'Nguyen', not 'Win'. Though yeah, it's pronounced kind of like that.",
            "Win",
            "Nguyen",
        ),
        (
            "My brother is Joaquín, with the accent — you keep writing Joaquim.",
            "Joaquim",
            "Joaquín",
        ),
    ],
)
def test_a_word_said_again_quoted_or_written_wrong_again_is_put_right(
    text: str, heard: str, meant: str
) -> None:
    assert detect_correction(normalize(text))[0] == Correction(heard=heard, meant=meant)


@pytest.mark.parametrize(
    "text",
    [
        "I like the red one not the blue one",
        "no i said oat milk not goat milk",
        "I want tea not coffee tea is better",
    ],
)
def test_two_of_a_kind_said_in_parallel_keep_their_own_pair(text: str) -> None:
    correction = detect_correction(normalize(text))[0]
    assert correction is None or correction == Correction(heard="goat", meant="oat")


@pytest.mark.parametrize(
    ("text", "heard", "meant"),
    [
        ("Not kilometres, I asked in miles, always miles for me.", "kilometres", "miles"),
        ("Not Tuesday, I asked for Thursday.", "Tuesday", "Thursday"),
    ],
)
def test_what_the_user_asked_for_is_the_meant_word(text: str, heard: str, meant: str) -> None:
    assert detect_correction(normalize(text))[0] == Correction(heard=heard, meant=meant)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "my name's Oksana by the way, not Roxana, people always get that wrong",
            "User's name is Oksana.",
        ),
        (
            "My language is Kurmanji, not Sorani, many people confuse this.",
            "User's language is Kurmanji.",
        ),
    ],
)
def test_a_mix_up_put_down_to_other_people_is_no_correction(text: str, fact: str) -> None:
    result = default_hybrid_extractor().extract(text)
    assert result.command is None and result.correction is None
    assert fact in [f.text for f in result.facts]


def test_a_mix_up_of_others_and_of_the_assistant_is_still_put_right() -> None:
    text = "people always get my name wrong, you too, it's Oksana not Roxana"
    assert default_hybrid_extractor().extract(text).correction == Correction(
        heard="Roxana", meant="Oksana"
    )


@pytest.mark.parametrize(
    "text", ["not a cat person, sorry cat people", "one child, sorry, children"]
)
def test_a_word_and_its_own_plural_are_no_slip(text: str) -> None:
    assert detect_correction(normalize(text))[0] is None


@pytest.mark.parametrize(
    "text, heard, meant",
    [
        (
            "My surname's Kowalczyk, K-O-W-A-L-C-Z-Y-K, you had it as Kowalski.",
            "Kowalski",
            "Kowalczyk",
        ),
        ("The party's on the 14th, you've got the 4th down.", "4th", "14th"),
        ("You said back 'Tuesday', I'd said Thursday for the plumber.", "Tuesday", "Thursday"),
        ("You understand 'fourteen' but I say 'forty'.", "fourteen", "forty"),
        ("uh the cat is luna not lunar shes a tabby", "lunar", "luna"),
    ],
)
def test_what_the_assistant_took_down_is_put_right(text: str, heard: str, meant: str) -> None:
    result = default_hybrid_extractor().extract(text)
    assert result.command is Command.CORRECTION
    assert result.correction == Correction(heard=heard, meant=meant)


@pytest.mark.parametrize(
    "text",
    ["I'm vegan, not vegetarian.", "im welsh not english", "I sat down and had it as a snack"],
)
def test_a_contrast_or_a_plain_statement_corrects_nothing(text: str) -> None:
    assert default_hybrid_extractor().extract(text).command is None


@pytest.mark.parametrize(
    "text, heard, meant",
    [
        ("Sorry, I meant the blue folder, not the green one.", "green", "blue"),
        ("I have allergy to the shrimp, sorry, not shrimp, I mean the crab.", "shrimp", "crab"),
    ],
)
def test_a_slip_the_speaker_owns_is_put_right(text: str, heard: str, meant: str) -> None:
    result = default_hybrid_extractor().extract(text)
    assert result.correction == Correction(heard=heard, meant=meant)


@pytest.mark.parametrize(
    "text",
    [
        "Please you write for me a short message to say sorry, I am late for the meeting.",
        "Dogs make life more fun, I wish I could get one, but like I said, it's tough.",
    ],
)
def test_an_apology_or_a_reminder_of_what_was_said_corrects_nothing(text: str) -> None:
    assert default_hybrid_extractor().extract(text).command is None


@pytest.mark.parametrize(
    "text, heard, meant",
    [
        ("wait i meant uh pounds not kilos the weight for the recipe", "kilos", "pounds"),
        ("no im not from iran i said iraq my family is from iraq", "iran", "iraq"),
        ("my cats name is pepper wait no its paprika", "pepper", "paprika"),
        ("Sorry, I said it wrong: my wife is nurse, not doctor.", "doctor", "nurse"),
        ("uh the name on the booking is um kowalski not kovalsky with a w", "kovalsky", "kowalski"),
    ],
)
def test_the_words_around_a_slip_are_no_part_of_it(text: str, heard: str, meant: str) -> None:
    assert extract(text).correction == Correction(heard=heard, meant=meant)


@pytest.mark.parametrize(
    "text, meant",
    [("Mrs. Adeyemi. Not Adeyami.", "Adeyemi"), ("Dr. Paz, not Dr. Pass", "Paz")],
)
def test_a_title_is_no_part_of_the_name_corrected(text: str, meant: str) -> None:
    result = extract(text)
    assert result.correction is not None and result.correction.meant == meant
    assert result.facts == ()
