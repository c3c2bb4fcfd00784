"""The privacy commands are heard however they are said; ordinary speech is not a command."""

import pytest

from memmesh.extraction import Command, extract


@pytest.mark.parametrize(
    "text",
    [
        "forget everything about me",
        "please forget everything you know about me",
        "delete all my data",
        "can you wipe your memory of me",
        "erase everything you've got on me",
        "forget I exist",
        "I want you to forget everything I've told you about me",
        "just forget everything.",
        "forget me entirely",
        "delete everything you have stored about me",
    ],
)
def test_forget_everything(text):
    result = extract(text)
    assert result.command is Command.FORGET_EVERYTHING
    assert result.command_target is None
    assert result.facts == ()


@pytest.mark.parametrize(
    "text",
    [
        "forget this conversation",
        "delete this whole conversation",
        "can we scrap this chat",
        "pretend this conversation never happened",
        "forget everything we talked about",
        "forget what I said today",
        "um, forget all of this conversation please",
    ],
)
def test_forget_this_conversation(text):
    assert extract(text).command is Command.FORGET_THREAD


@pytest.mark.parametrize(
    "text",
    [
        "don't remember this",
        "dont save that",
        "off the record, my cousin Petra is in rehab",
        "keep this between us, I'm interviewing at Google",
        "between you and me, my boss drinks at work",
        "just between us, I'm pregnant",
        "please don't keep a record of this",
        "no need to remember this",
        "I'd rather you didn't save this",
        "I don't want any of this saved",
        "this stays strictly between us",
    ],
)
def test_do_not_store_keeps_nothing(text):
    result = extract(text)
    assert result.command is Command.DO_NOT_STORE
    assert result.facts == () and result.rejections == ()


@pytest.mark.parametrize(
    "text, target",
    [
        ("forget that my sister lives in Porto", "sister lives in Porto"),
        ("please delete what I told you about my landlord", "landlord"),
        ("scratch that", None),
        ("ok scratch that from your memory", None),
        ("never mind what I said about my ex", "ex"),
        ("could you kindly forget what I mentioned about my job", "job"),
        ("forget I said anything about my diagnosis", "diagnosis"),
        ("remove my address from your memory", "address"),
        ("um, forget that, please", None),
    ],
)
def test_forget_one_thing(text, target):
    result = extract(text)
    assert result.command is Command.FORGET
    assert result.command_target == target


@pytest.mark.parametrize(
    "text",
    [
        "I always forget my umbrella",
        "don't forget to water the plants",
        "remove my 9am meeting",
        "delete my last email",
        "there's a lot of distance between us",
        "forget it, let's get pizza",
        "I keep forgetting everything these days",
        "clear my calendar for Friday",
        "the conversation with my boss never happened",
    ],
)
def test_ordinary_speech_is_no_command(text):
    assert extract(text).command is None


@pytest.mark.parametrize(
    "text, target",
    [
        ("Delete it.", None),
        ("Can you remove those, please?", None),
        ("Forget about her.", "her"),  # a pronoun: what was just said about someone
        ("Forget the thing about my aunt.", "aunt"),
        ("Delete everything about my cousin.", "cousin"),
        ("Erase my aunt's info.", "aunt's info"),
    ],
)
def test_forget_said_the_way_people_say_it(text, target):
    result = extract(text)
    assert result.command is Command.FORGET
    assert result.command_target == target
    assert result.facts == ()


@pytest.mark.parametrize(
    "text",
    [
        "Forget about it.",
        "Forget about it, I'll do it myself.",
        "I had to delete it.",
        "I deleted those.",
    ],
)
def test_dismissals_and_reports_of_deleting_are_not_forgets(text):
    assert extract(text).command is None


@pytest.mark.parametrize(
    "text, command, target",
    [
        # What is kept, then what it is about.
        ("get rid of whatever you know about my ex", Command.FORGET, "ex"),
        ("purge anything you have on my medication", Command.FORGET, "medication"),
        ("you can throw away what I said about my old job", Command.FORGET, "old job"),
        ("unlearn the fact that I live in Leeds", Command.FORGET, "I live in Leeds"),
        ("wipe that last thing I said from your memory", Command.FORGET, None),
        # A subject to leave alone, said with other verbs.
        ("avoid the subject of my miscarriage from now on", Command.DO_NOT_MENTION, "miscarriage"),
        ("quit referring to my old house", Command.DO_NOT_MENTION, "old house"),
        ("the topic of money is off limits from now on", Command.DO_NOT_MENTION, "money"),
        ("my divorce is off limits from now on", Command.DO_NOT_MENTION, "divorce"),
        # Only when asked.
        ("only use my details when I ask about them", Command.PULL_ONLY, "details"),
        ("keep my health info to yourself unless I bring it up", Command.PULL_ONLY, "health info"),
        # The tone kept of the user's moods.
        ("stop noting how I'm feeling", Command.FORGET_TONE, None),
        ("don't keep track of my moods", Command.FORGET_TONE, None),
        ("feel free to remember anything I tell you", Command.REMEMBER_EVERYTHING, None),
        ("you're allowed to store whatever I tell you", Command.REMEMBER_EVERYTHING, None),
        ("take my work address out of your memory", Command.FORGET, "work address"),
        ("can we go back to talking about the move", Command.RESUME_THREAD, "move"),
        ("I'd appreciate it if you stopped mentioning my ex", Command.DO_NOT_MENTION, "ex"),
        ("please erase what I say about my salary", Command.FORGET, "salary"),
    ],
)
def test_commands_said_with_other_words_for_their_parts(text, command, target):
    result = extract(text)
    assert (result.command, result.command_target) == (command, target)
    assert result.facts == ()


@pytest.mark.parametrize(
    "text",
    [
        "my therapist says I should stop bringing up the past",
        "she asked me to stop mentioning her ex",
        "I stopped mentioning it to her years ago",
        "can we go back to the previous song",
        "I'd like to avoid sugar from now on",
        "I avoid talking about my dad",
        "the pool is off limits after dark",
        "he's off limits, he's my best friend's ex",
        "I need to throw away the old couch",
        "I keep my feelings to myself usually",
        "my mom tracks her moods in an app",
    ],
)
def test_look_alikes_of_those_words_are_no_command(text):
    assert extract(text).command is None
