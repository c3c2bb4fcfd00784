"""Memory-control commands, their targets, and correction pairs."""

import pytest

from memmesh.extraction import Command, Correction, extract


@pytest.mark.parametrize(
    "text, command, target",
    [
        ("so what do you actually know about me?", Command.RECALL_SUMMARY, None),
        ("forget what I told you about my landlord", Command.FORGET, "landlord"),
        ("ok delete that memory please", Command.FORGET, None),
        ("don't remember any of this", Command.DO_NOT_STORE, None),
        ("only bring up my knee surgery if I ask", Command.PULL_ONLY, "knee surgery"),
        ("don't bring up old conversations unless I ask", Command.RECALL_ONLY_IF_ASKED, None),
        ("quit mentioning my student loans", Command.DO_NOT_MENTION, "student loans"),
        ("please remember everything from now on", Command.REMEMBER_EVERYTHING, None),
        ("can we resume the thread about the garden shed", Command.RESUME_THREAD, "garden shed"),
        ("delete this whole conversation", Command.FORGET_THREAD, None),
    ],
)
def test_command_and_target(text, command, target):
    result = extract(text)
    assert result.command is command
    assert result.command_target == target
    assert result.facts == ()


def test_do_not_store_drops_durable_facts_and_logs_nothing():
    result = extract("off the record, my cousin Petra is in rehab and I'm on antidepressants")
    assert result.command is Command.DO_NOT_STORE
    assert result.relevant is False
    assert result.facts == () and result.rejections == ()


def test_other_commands_can_carry_a_durable_fact():
    result = extract("what do you remember about me? btw I moved to Tallinn in May")
    assert result.command is Command.RECALL_SUMMARY
    assert [f.text for f in result.facts] == ["User lives in Tallinn."]


def test_explicit_remember_request_is_an_ordinary_fact():
    result = extract("please remember that I'm allergic to walnuts")
    assert result.command is None
    assert result.facts[0].text == "User is allergic to walnuts."


def test_forgetting_in_a_statement_is_not_a_command():
    assert extract("I always forget my umbrella").command is None
    assert extract("don't forget to water the plants").command is None


@pytest.mark.parametrize(
    "text, heard, meant",
    [
        ("no, I said Anouk, not Annick", "Annick", "Anouk"),
        ("I said thirteen dollars, not thirty", "thirty", "thirteen"),
        ("not Dallas, Dulles. the airport", "Dallas", "Dulles"),
        ("I meant Friday not Sunday", "Sunday", "Friday"),
    ],
)
def test_correction_pairs_use_shortest_spans(text, heard, meant):
    result = extract(text)
    assert result.command is Command.CORRECTION
    assert result.correction == Correction(heard=heard, meant=meant)


def test_correction_keeps_the_corrected_fact_without_the_misheard_value():
    result = extract("no no, my son is Mikkel, M-I-K-K-E-L, not Michael")
    assert result.correction == Correction(heard="Michael", meant="Mikkel")
    assert len(result.facts) == 1
    fact = result.facts[0]
    assert fact.category == "relationship" and "Mikkel" in fact.text
    assert "Michael" not in fact.text


def test_plain_contrast_is_not_a_correction():
    result = extract("I live in Kampala, the old town, not the suburbs")
    assert result.command is None and result.correction is None
    assert result.facts[0].key == "identity.residence"


@pytest.mark.parametrize(
    ("text", "heard", "meant"),
    [
        # Numbers, weekdays and names a recogniser swaps, said bare: the pair need not
        # share many letters, only its first sound.
        ("Twelve. Not twenty.", "twenty", "Twelve"),
        ("Not Tuesday. Thursday.", "Tuesday", "Thursday"),
        ("Hove, not Hull. That's where I live.", "Hull", "Hove"),
        ("Mark, not Mike. Call Mark.", "Mike", "Mark"),
        # Only the words right before "not": never the "No" that opens the turn.
        ("No, I said Ana, not Nia.", "Nia", "Ana"),
        ("No, I said Qmukvpara, not Ndcjgmhzk.", "Ndcjgmhzk", "Qmukvpara"),
    ],
)
def test_bare_pairs_of_numbers_days_and_names_are_corrections(
    text: str, heard: str, meant: str
) -> None:
    correction = extract(text).correction
    assert correction is not None
    assert (correction.heard, correction.meant) == (heard, meant)


@pytest.mark.parametrize(
    "text", ["Grams, not cups.", "Tea, not coffee.", "I live in Leeds, not London"]
)
def test_contrasts_of_different_first_sound_are_no_correction(text: str) -> None:
    assert extract(text).correction is None


@pytest.mark.parametrize(
    ("text", "heard", "meant", "fact"),
    [
        ("Celsius, not Fahrenheit.", "Fahrenheit", "Celsius", "celsius"),
        ("Kilos, not pounds. Always.", "pounds", "Kilos", "kilos"),
        ("Mate, it's metric. Kilometres, not miles.", "miles", "Kilometres", "kilometres"),
    ],
)
def test_two_units_of_one_measure_put_one_right_and_keep_the_rule(
    text: str, heard: str, meant: str, fact: str
) -> None:
    result = extract(text)
    assert result.correction is not None
    assert (result.correction.heard, result.correction.meant) == (heard, meant)
    assert any(fact in f.text.lower() and f.category == "constraint" for f in result.facts)


@pytest.mark.parametrize(
    "text",
    [
        "this conversation about my neighbors, please delete all of it",
        "this chat, wipe it all",
        "our talk today about money, erase all of it please",
    ],
)
def test_all_of_the_conversation_just_named_is_that_conversation(text):
    assert extract(text).command is Command.FORGET_THREAD


@pytest.mark.parametrize(
    "text",
    ["forget it all, please, everything about me", "I want to start over. delete all of it."],
)
def test_all_of_it_with_no_conversation_named_or_about_me_is_everything(text):
    assert extract(text).command is Command.FORGET_EVERYTHING


@pytest.mark.parametrize("text", ["Memories: on request only.", "Recall: on request only, always."])
def test_the_memory_itself_on_request_is_asked_only_recall(text):
    result = extract(text)
    assert (result.command, result.command_target) == (Command.RECALL_ONLY_IF_ASKED, None)


def test_a_topic_on_request_stays_pull_only():
    result = extract("Debt stuff: on request only")
    assert (result.command, result.command_target) == (Command.PULL_ONLY, "Debt")


def test_a_back_and_forth_named_then_erased_is_that_conversation():
    assert extract("this whole back-and-forth about the move, nuke it").command is (
        Command.FORGET_THREAD
    )


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("that bit I told you about my loan, delete it, don't keep it", "loan"),
        ("yeah that last thing I said about the money stuff, get rid of it, dont keep it", "money"),
    ],
)
def test_not_keeping_what_was_pointed_back_at_is_a_forget(text, target):
    result = extract(text)
    assert (result.command, result.command_target) == (Command.FORGET, target)


def test_not_keeping_what_comes_next_stays_do_not_store():
    assert extract("don't keep this, I'm pregnant").command is Command.DO_NOT_STORE


@pytest.mark.parametrize(
    "text",
    [
        "go ahead and hoover up everything I say from now on, no filtering",
        "I want you to hang on to every single thing I tell you from here on",
    ],
)
def test_all_the_user_says_kept_from_now_on_is_remember_everything(text):
    assert extract(text).command is Command.REMEMBER_EVERYTHING


@pytest.mark.parametrize(
    "text",
    [
        "so go on then, run me through whatever it is you've kept about me",
        "okay um give me a rundown of like everything you've saved about me",
        "Memory dump on me, please.",
    ],
)
def test_what_is_kept_about_the_user_read_out_is_a_recall_summary(text):
    assert extract(text).command is Command.RECALL_SUMMARY


def test_what_the_assistant_knows_of_a_subject_is_no_recall_summary():
    assert extract("run me through what you know about sourdough").command is None
