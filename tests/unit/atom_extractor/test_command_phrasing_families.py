"""Each memory command is heard across its family of phrasings; corrections in every shape
give the shortest heard/meant spans; look-alike ordinary speech stays ordinary."""

import pytest

from memmesh.extraction import Command, Correction, extract
from memmesh.extraction.learned import default_hybrid_extractor


@pytest.mark.parametrize(
    "text",
    [
        "what info do you have on me",
        "which details have you stored about me?",
        "What things you know of me?",
        "what have you learned about me so far",
        "what is stored about me",
        "do you remember anything about me?",
        "what do you have in your memory about me",
        "what's in my profile?",
        "my memory profile. what's in there?",
    ],
)
def test_asking_what_is_kept_is_a_recall_summary(text: str) -> None:
    assert extract(text).command is Command.RECALL_SUMMARY


@pytest.mark.parametrize(
    "text",
    [
        "nuke everything you know about me",
        "wipe my entire profile",
        "blow away all my data",
        "forget me and start over",
        "erase every last thing about me",
        "forget me totally, start fresh",
        "erase what you know about me",
        "wipe the stuff about me",
        "can you forget about me",
        "forget me please",
        "I'd like you to forget me.",
    ],
)
def test_wiping_the_user_is_forget_everything(text: str) -> None:
    result = extract(text)
    assert result.command is Command.FORGET_EVERYTHING
    assert result.command_target is None


@pytest.mark.parametrize(
    "text",
    [
        "so yeah, just forget about me, apparently that's what everyone does",
        "you know what, forget me, nobody cares anyway",
        "oh just forget about me",
    ],
)
def test_venting_forget_about_me_erases_nothing(text: str) -> None:
    # Said to no one in particular, it is a mood, not a request to erase the user.
    assert extract(text).command is None


@pytest.mark.parametrize(
    "text, target",
    [
        ("delete please what I told you about my debts", "debts"),
        ("remove the note about my old job", "old job"),
        ("erase the part where I talked about my debt", None),
    ],
)
def test_forget_with_a_word_between_verb_and_object(text: str, target: str | None) -> None:
    result = extract(text)
    assert result.command is Command.FORGET
    assert result.command_target == target


@pytest.mark.parametrize(
    "text",
    [
        "please don't put this in your notes",
        "don't add that to my profile, but I'm pregnant",
        "leave this out of your memory: I was fired",
        "could you not save this",
        "would you not write that down",
        "no recording, please. I'm struggling at work",
        "this isn't for your memory, my dad is sick",
        "That one you don't save.",
        "please don't log this one",
    ],
)
def test_keeping_something_out_of_memory_is_do_not_store(text: str) -> None:
    result = extract(text)
    assert result.command is Command.DO_NOT_STORE
    assert result.facts == ()


@pytest.mark.parametrize(
    "text, target",
    [
        ("mention it only when I ask", None),
        ("use this only if I ask for it", None),
        ("don't bring it up unless I do", None),
        ("keep my divorce on a need-to-know basis", "divorce"),
        ("my diagnosis, I don't want it popping up randomly", None),
        ("the money stuff, don't raise it on your own", None),
    ],
)
def test_one_item_recalled_only_on_request_is_pull_only(text: str, target: str | None) -> None:
    result = extract(text)
    assert result.command is Command.PULL_ONLY
    assert result.command_target == target


@pytest.mark.parametrize(
    "text",
    [
        "don't bring up stuff you remember unless I ask",
        "never volunteer what you know about me",
        "stop auto-resuming old chats",
        "don't automatically pick up where we left off",
        "only use my memories when I ask",
        "keep everything you know about me on a need-to-ask basis",
    ],
)
def test_all_memories_recalled_only_on_request_is_the_global_mode(text: str) -> None:
    assert extract(text).command is Command.RECALL_ONLY_IF_ASKED


@pytest.mark.parametrize(
    "text, target",
    [
        ("don't bring up my ex ever again", "ex"),
        ("never talk about my weight again", "weight"),
        ("please don't ask me about work anymore", "work"),
        ("no more questions about my job", "job"),
        ("don't remind me about the gym from now on", "gym"),
        ("I don't want to hear about the move anymore", "move"),
        ("we agreed you don't raise Pedro, at all", "Pedro"),
    ],
)
def test_asking_never_to_raise_a_topic_is_do_not_mention(text: str, target: str | None) -> None:
    result = extract(text)
    assert result.command is Command.DO_NOT_MENTION
    assert result.command_target == target


@pytest.mark.parametrize(
    "text, target",
    [
        ("let's go back to the wedding planning", "wedding planning"),
        ("can we get back to my thesis outline", "thesis outline"),
        ("anyway, back to the wedding speech.", "wedding speech"),
        ("let's continue the conversation about the garden", "garden"),
        ("pick up the conversation about my thesis", "thesis"),
        ("let's revisit the budget", "budget"),
        ("where did we leave off with the novel", "novel"),
        ("return to our chat on taxes", "taxes"),
        ("continue where we left off on the car loan", "car loan"),
        ("open the tax return thread again", "tax return"),
    ],
)
def test_returning_to_a_topic_resumes_its_thread(text: str, target: str | None) -> None:
    result = extract(text)
    assert result.command is Command.RESUME_THREAD
    assert result.command_target == target


@pytest.mark.parametrize(
    "text, heard, meant",
    [
        ("Marseille, not Marsala.", "Marsala", "Marseille"),
        ("it's Ljubljana, not Ljubjana", "Ljubjana", "Ljubljana"),
        ("its fourteen not forty", "forty", "fourteen"),
        # A time said in words is corrected whole.
        ("it's seventeen forty not seventy forty", "seventy forty", "seventeen forty"),
        ("the name is Niamh, not Neve", "Neve", "Niamh"),
        ("hmm, not Sonia, Sonja, with a j", "Sonia", "Sonja"),
        ("not Bern but Berlin", "Bern", "Berlin"),
        ("not sixty sixteen", "sixty", "sixteen"),
        ("it's not Greta, it's Gretchen", "Greta", "Gretchen"),
        ("it isn't Tom, it's Tim", "Tom", "Tim"),
        ("Is not Porto, is Pordenone", "Porto", "Pordenone"),
        ("I didn't say Bern, I said Berlin", "Bern", "Berlin"),
        ("I'm not Craig, I'm Greg, you keep getting that wrong", "Craig", "Greg"),
        ("you've got it wrong, I'm a dentist, not a dancer", "dancer", "dentist"),
        ("you wrote Jon there but it's John", "Jon", "John"),
        ("you put Mark down, but it's Marc, M-A-R-C", "Mark", "Marc"),
        ("I said the blue one not the blues", "blues", "blue"),
        ("I meant ibuprofen not paracetamol I take it daily", "paracetamol", "ibuprofen"),
        ("Bergen. Not Burgen.", "Burgen", "Bergen"),
        ("Nadia. Not Nadine. My niece.", "Nadine", "Nadia"),
        ("I don't say cheap, I say chip, the chip in my card", "cheap", "chip"),
        ("you've put Monday the ninth, I said Sunday the ninth", "Monday", "Sunday"),
        ("wait, that's not right, I work in Derby, not Darby", "Darby", "Derby"),
        # "lives" sounds as much like "Leicester" as "Leeds" does: the word said right before
        # the denial is the one it contrasts.
        ("no, she lives in Leeds, not Leicester", "Leicester", "Leeds"),
    ],
)
def test_correction_shapes_give_the_shortest_spans(text: str, heard: str, meant: str) -> None:
    result = extract(text)
    assert result.command is Command.CORRECTION
    assert result.correction == Correction(heard=heard, meant=meant)


def test_correction_keeps_what_was_meant_for_the_facts() -> None:
    result = extract("sorry, that came out wrong, I'm not a pianist, I'm a pharmacist")
    assert result.correction == Correction(heard="pianist", meant="pharmacist")
    assert [f.category for f in result.facts] == ["identity"]
    assert "pharmacist" in result.facts[0].text and "pianist" not in result.facts[0].text


def test_a_whole_occupation_is_meant_when_no_word_of_it_sounds_like_the_misheard_one() -> None:
    result = extract("no, I said civil engineering, not accounting")
    assert result.correction == Correction(heard="accounting", meant="civil engineering")


@pytest.mark.parametrize(
    "text",
    [
        "what do you think about me",
        "what do you know about meditation",
        "don't put it in the fridge",
        "keep this out of reach of the kids",
        "no saving money this month, ugh",
        "That you don't remember my birthday hurts",
        "I don't talk about my brother anymore",
        "we never talk about politics at all",
        "my parents don't mention it anymore",
        "let's go back to the hotel",
        "back to work tomorrow",
        "let's go back to the restaurant from last week",
        "let's get back to the car before it rains",
        "keep everything in pesos",
        "save everything to the cloud",
        "I save everything, I'm a hoarder",
        "I'm vegan, not vegetarian",
        "grams, not cups. every recipe.",
        "It's a cat, not a dog",
        "Not bad, thanks",
        "not sure, maybe Tuesday",
        "not me, my sister",
        "no worries, not a problem",
        "I'm not Hindu, I'm an atheist",
        "I'm not Christian, I'm Jewish",
        "the problem is not money, it's time",
        "it isn't cheap, it's free",
        "I'm a night owl, not a morning person",
        "the parcel did not reach the depot",
        "open the group chat",
        "Tea. Not coffee.",
        "Fine. Not great.",
        "I got home late. Not happy about it.",
        "that's not right, the bill is wrong",
        "I don't say much, I say what I mean",
    ],
)
def test_look_alike_ordinary_speech_is_no_command(text: str) -> None:
    result = extract(text)
    assert result.command is None
    assert result.correction is None


@pytest.mark.parametrize(
    "text, command",
    [
        ("read me back all the stuff you have on me", Command.RECALL_SUMMARY),
        ("list your memories of me", Command.RECALL_SUMMARY),
        ("ditch what I told you about the lawsuit", Command.FORGET),
        ("take out of your notes my old address", Command.FORGET),
        ("unsave that, please", Command.FORGET),
        ("toss this whole conversation", Command.FORGET_THREAD),
        ("not for your records: I owe my brother money", Command.DO_NOT_STORE),
        ("could you please never bring up my ex again", Command.DO_NOT_MENTION),
        ("the visa stuff, keep it but only when I ask", Command.PULL_ONLY),
        ("going forward hold on to everything I mention", Command.REMEMBER_EVERYTHING),
        # Other erase and mention verbs, a particle split from its verb ("bring X up"), a
        # polite or a learner's negation ("can you not", "please not"), a topic that begins
        # with a place word, transcript spellings ("pls", "convo").
        ("scratch what I said about my salary", Command.FORGET),
        ("please don't keep the bit about my ex", Command.FORGET),
        ("un-remember my old address please", Command.FORGET),
        ("can you stop remembering that I smoke", Command.FORGET),
        ("lose the stuff about my debt", Command.FORGET),
        ("keep this one off your records", Command.DO_NOT_STORE),
        ("never bring my divorce up again", Command.DO_NOT_MENTION),
        ("I'd rather you didn't talk about my dad anymore", Command.DO_NOT_MENTION),
        ("please leave my weight out of our conversations", Command.DO_NOT_MENTION),
        ("can you not mention the accident from now on", Command.DO_NOT_MENTION),
        ("wipe me from your memory completely", Command.FORGET_EVERYTHING),
        ("let's pretend we never had this chat", Command.FORGET_THREAD),
        ("let's get back to the kitchen renovation", Command.RESUME_THREAD),
        ("reset everything you know about me", Command.FORGET_EVERYTHING),
        ("how much do you know about me", Command.RECALL_SUMMARY),
        ("show me my memory", Command.RECALL_SUMMARY),
        ("don't bring up stuff from before unless I ask", Command.RECALL_ONLY_IF_ASKED),
        ("wait for me to ask before using what you remember", Command.RECALL_ONLY_IF_ASKED),
        ("don't use my history unless I tell you to", Command.RECALL_ONLY_IF_ASKED),
        ("pls forget what i said about my address", Command.FORGET),
        ("you must forget my old phone number", Command.FORGET),
        ("forget this whole convo", Command.FORGET_THREAD),
        ("please not save this, my visa is expired", Command.DO_NOT_STORE),
        ("not speak about my father anymore please", Command.DO_NOT_MENTION),
        ("tell me what you are knowing about me", Command.RECALL_SUMMARY),
        ("please this you don't memorise: I was fired", Command.DO_NOT_STORE),
        ("I'd like you to not save any of this, it's about my debts", Command.DO_NOT_STORE),
        ("for today's chat, save nothing", Command.DO_NOT_STORE),
        ("my ex's new address, can you delete it", Command.FORGET),
        ("the thing I told you about my landlord, please wipe that", Command.FORGET),
        ("please you delete what I told about my cousin", Command.FORGET),
        ("I have epilepsy. Bring up only if asked.", Command.PULL_ONLY),
        ("my divorce, speak about it only when I ask", Command.PULL_ONLY),
        ("set memory to ask-only mode", Command.RECALL_ONLY_IF_ASKED),
        ("no more you talk about my diet please", Command.DO_NOT_MENTION),
        ("from now on remember all that I tell you", Command.REMEMBER_EVERYTHING),
        ("Continue: garden plans.", Command.RESUME_THREAD),
        ("let's go back to the conversation of the wedding budget", Command.RESUME_THREAD),
        ("today's chat, can you delete it", Command.FORGET_THREAD),
        ("please erase out all the details you have about me", Command.FORGET_EVERYTHING),
        ("Wipe. Everything.", Command.FORGET_EVERYTHING),
        ("Full wipe please, the lot.", Command.FORGET_EVERYTHING),
        # "this one" pointed at the talk the turn names.
        ("can you forget this one, this whole chat, start over", Command.FORGET_THREAD),
        ("Noted, but only mention it if I bring it up.", Command.PULL_ONLY),
        ("forget that, it was about this conversation with my boss", Command.FORGET),
    ],
)
def test_less_common_phrasings_are_heard(text: str, command: Command) -> None:
    assert extract(text).command is command


@pytest.mark.parametrize(
    "text",
    [
        "I hang on to everything, I'm a hoarder",
        "keep it simple only if I ask for more",
        "this bread is not for the memory of my gran",
        "scrap the plan, we're staying home",
        "show me the things you know about Paris",
        "I can't stop remembering that day",
        "I never bring my divorce up with my mom",
        "you never bring it up anymore",
        "we got back to the hotel before dark",
        "let's get back to the kitchen",
        "I always lose my keys",
        "please leave the dog out of the bedroom",
        "he wiped me from his contacts",
        "don't keep the receipts about the car",
        "stop storing your shoes in the hallway",
        "I'm trying to unlearn bad habits",
        "reset my password please",
        "how much do you know about jazz",
        "don't use my card unless I tell you to",
        "wait for me to ask before ordering",
        "give me your notes on the book",
        "I would rather not save this file",
        "we did not talk about money again",
        "you must forget your fears",
        "not speak so fast please",
        "this convo was fun",
        "I remember nothing of that trip",
        "we keep nothing in the garage",
        "my old bike, I sold it",
        "my keys, can you remind me to take them",
        "I told you so, didn't I",
        "Reset. Everything is fine now.",
        "use only if asked by the doctor",
        "resume the download",
        "this conversation, I really enjoyed it",
        "I remember all of it, every word",
    ],
)
def test_look_alikes_of_the_less_common_phrasings_are_no_command(text: str) -> None:
    assert extract(text).command is None


@pytest.mark.parametrize(
    ("text", "command", "target"),
    [
        # Openers and a "like" filler before the request are speech, not content.
        ("um so yeah can you like forget the thing about my knee", Command.FORGET, "knee"),
        ("you know what I said about Dave? yeah forget that", Command.FORGET, "Dave"),
        # What is to go comes first, the erasing verb after it, about "it" or "that".
        (
            "so the thing about my sister's boyfriend, just forget about it ok",
            Command.FORGET,
            "sister's boyfriend",
        ),
        ("I regret telling you about the loan, could you wipe that", Command.FORGET, "loan"),
        ("please erase all what you know of me", Command.FORGET_EVERYTHING, None),
        ("only if I ask, talk about my health", Command.PULL_ONLY, "health"),
    ],
)
def test_spoken_requests_with_fillers_and_fronted_topics(
    text: str, command: Command, target: str | None
) -> None:
    result = extract(text)
    assert result.command is command
    assert result.command_target == target


def test_remembering_all_the_things_said_is_remember_everything() -> None:
    assert (
        extract("you can remember all the things I tell you, no problem").command
        is Command.REMEMBER_EVERYTHING
    )


@pytest.mark.parametrize(
    "text",
    ["yeah", "would you like coffee or tea", "I just like cooking for friends"],
)
def test_openers_alone_and_the_verb_like_are_no_command(text: str) -> None:
    assert extract(text).command is None


@pytest.mark.parametrize(
    "text",
    [
        "my sister told me to just forget about him and move on",
        "my therapist says I should stop bringing up my ex so much",
        "my mom keeps telling me to forget about the whole thing",
    ],
)
def test_someone_elses_words_reported_are_no_command(text: str) -> None:
    assert extract(text).command is None


def test_a_command_after_a_report_of_someone_elses_words_is_still_heard() -> None:
    text = "my sister told me to relax. please forget what I told you about my mom"
    assert extract(text).command is Command.FORGET


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("ok incognito mode for this one, don't hang on to any of it", Command.DO_NOT_STORE),
        ("can we go incognito for a minute, it's about my ex", Command.DO_NOT_STORE),
        ("Total wipe please. All of it, everything you have on me.", Command.FORGET_EVERYTHING),
        # What "this" points back at is one topic, held back until asked.
        ("I've got Crohn's, this only recall if I ask you", Command.PULL_ONLY),
        ("only recall things if I ask", Command.RECALL_ONLY_IF_ASKED),
        ("so whats in my memory file these days", Command.RECALL_SUMMARY),
    ],
)
def test_a_browsers_word_a_wipe_named_and_a_topic_pointed_back_at(
    text: str, command: Command
) -> None:
    assert extract(text).command is command


@pytest.mark.parametrize(
    "text", ["I always browse in incognito mode", "I did a total reset of my phone last week"]
)
def test_a_browser_or_a_phone_of_the_users_is_no_command(text: str) -> None:
    assert extract(text).command is None


@pytest.mark.parametrize(
    ("text", "command", "target"),
    [
        ("Drop the topic of my weight. For good.", Command.DO_NOT_MENTION, "weight"),
        ("please you don't talk more about my divorce", Command.DO_NOT_MENTION, "divorce"),
        # A conversation named: "back to the ... chat", "open again our talk about ...", "go
        # back to what we were discussing about ...".
        ("Back to the visa chat from Monday - they replied", Command.RESUME_THREAD, "visa"),
        ("Please open again our talk about the garden shed.", Command.RESUME_THREAD, "garden shed"),
        (
            "can we go back to what we were discussing about my mortgage, the bank called",
            Command.RESUME_THREAD,
            "mortgage",
        ),
    ],
)
def test_a_topic_dropped_or_a_conversation_named_to_go_back_to(
    text: str, command: Command, target: str
) -> None:
    result = extract(text)
    assert (result.command, result.command_target) == (command, target)


@pytest.mark.parametrize(
    "text",
    [
        "back to the hotel we go",
        "my parents don't talk anymore about the divorce",
        "whats in my fridge, can you guess",
    ],
)
def test_going_somewhere_or_news_of_others_is_no_command(text: str) -> None:
    assert extract(text).command is None


@pytest.mark.parametrize(
    "text",
    [
        "my brother's court case, only talk about that if I ask",
        "the IVF stuff, you can keep it, but only bring it back if I raise it",
        "my debts - keep it in your pocket unless I bring it up",
        "About my surgery, remember it, but tell me only when I ask.",
        "Keep my mum's diagnosis on ice unless I ask.",
    ],
)
def test_one_topic_held_until_asked_in_more_words(text: str) -> None:
    assert extract(text).command is Command.PULL_ONLY


@pytest.mark.parametrize(
    "text", ["keep the cake in the fridge until I ask", "only talk about that if you want to"]
)
def test_keeping_a_thing_or_a_free_choice_is_no_pull_only(text: str) -> None:
    assert extract(text).command is None


@pytest.mark.parametrize(
    "text",
    [
        "Would you mind erasing the note you have about my brother's gambling problem?",
        "delete the info you have on my old address",
        "I no longer see Dr. Patel since she retired, so you can remove her from what you remember about me.",
    ],
)
def test_a_note_of_the_assistants_or_someone_taken_out_of_its_memory_is_forgotten(
    text: str,
) -> None:
    assert extract(text).command is Command.FORGET


def test_a_recognisers_for_get_is_forget() -> None:
    assert extract(
        "um can you for get today's session like all of what we discussed today"
    ).command is (Command.FORGET_THREAD)


@pytest.mark.parametrize(
    "text",
    [
        "Yeah Jon, you've got the right attitude! Keep learning and growing. Keep going!",
        "Cool, Tim! Progress is progress, keep it up.",
    ],
)
def test_encouragement_to_keep_going_keeps_nothing(text: str) -> None:
    assert default_hybrid_extractor().extract(text).command is None


def test_keeping_all_from_today_is_remember_everything() -> None:
    text = "Starting today, please you keep in memory all the things I am saying."
    assert default_hybrid_extractor().extract(text).command is Command.REMEMBER_EVERYTHING


def test_news_beside_an_ask_only_request_is_kept_as_a_fact() -> None:
    text = "I have HIV, it is controlled with medicine. Please only when I ask you, you can speak about this."
    result = default_hybrid_extractor().extract(text)
    assert result.command is Command.PULL_ONLY
    assert [fact.category for fact in result.facts] == ["constraint"]
    assert "hiv" in result.facts[0].text.lower()
