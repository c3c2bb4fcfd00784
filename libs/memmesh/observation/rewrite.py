"""How the deterministic Observer words a user sentence: fillers and hedges out, told in
the third person ("I'm moving to Lisbon in May, um, I think" -> "User is moving to Lisbon
in May.")."""

from __future__ import annotations

import re

from memmesh.observation.cues import CHOICE_QUESTION
from memmesh.text import CONVERSATION_STOP_WORDS, stem, words

_FLAGS = re.IGNORECASE
# Sounds and tags that carry nothing wherever they stand.
_SOUNDS = re.compile(r",?\s*\b(?:u+m+|u+h+|e+r+m+|h+m+|m+h?m+|ah+)\b,?", _FLAGS)
_INNER_FILLER = re.compile(
    r",\s*(?:like|you\s+know|i\s+mean|basically|actually|honestly|literally|sort\s+of"
    r"|kind\s+of)\s*,",
    _FLAGS,
)
_HEDGE_WORDS = re.compile(r"\b(?:kind\s+of|sort\s+of|basically|literally)\s+", _FLAGS)
_LEADING = re.compile(
    r"^(?:(?:so|well|okay|ok|oh|yeah|yes|alright|anyway|and|but|also|actually|basically"
    r"|honestly|now|then)\b,?\s*|(?:like|right|i\s+mean|you\s+know),\s*"
    r"|i\s+(?:think|guess|believe|feel\s+like|suppose)(?:\s+that)?\s+(?=\w))+",
    _FLAGS,
)
_TRAILING = re.compile(
    r",?\s*\b(?:i\s+think|i\s+guess|i\s+suppose|i\s+believe|you\s+know|right|probably|maybe"
    r"|or\s+something(?:\s+like\s+that)?|or\s+so|if\s+that\s+makes\s+sense|lol|haha)\s*$",
    _FLAGS,
)
_END = re.compile(r"[\s,;:.!…-]+$")

_ADVERBS = frozenset(
    """really also just still usually always never actually definitely probably only often
    sometimes already finally totally absolutely mostly recently even""".split()
)
_UNCHANGED = frozenset(
    """can could will would should might must may shall can't couldn't won't wouldn't
    shouldn't mustn't was""".split()
)
_SUBJECT_VERBS = {
    "am": "is",
    "are": "is",
    "were": "was",
    "have": "has",
    "do": "does",
    "don't": "doesn't",
    "haven't": "hasn't",
    "aren't": "isn't",
    "weren't": "wasn't",
    "go": "goes",
}
_IRREGULAR_PAST = frozenset(
    """went had got made took came saw met bought found gave told left sold sent spent paid
    built began broke brought drove ate fell flew forgot heard lost wrote won ran did chose
    chosen put set cut let thought said knew kept felt meant""".split()
)
# Verbs that end in -ed without being past tense.
_NOT_PAST = frozenset("need feed speed exceed proceed succeed embed shred".split())
# A sentence's subject and its contraction, with what the third person says instead.
_SUBJECT = re.compile(r"^(?:i|we)(?P<tail>'m|'re|'ve|'ll|'d)?\b\s*", _FLAGS)
_CONTRACTED = {"'m": "is", "'re": "is", "'ve": "has", "'ll": "will", "'d": "would"}
_POSSESSIVE_START = re.compile(r"^(?:my|our)\s+", _FLAGS)
_LETS = re.compile(r"^let's\s+", _FLAGS)
_AND_I = re.compile(r"\b(?:and|with)\s+(?:i|me)\b", _FLAGS)
_OBJECTS = {
    "i'm": "they're",
    "i've": "they've",
    "i'll": "they'll",
    "i'd": "they'd",
    "we're": "they're",
    "we've": "they've",
    "we'll": "they'll",
    "we'd": "they'd",
    "i": "they",
    "we": "they",
    "me": "them",
    "us": "them",
    "my": "their",
    "our": "their",
    "mine": "theirs",
    "ours": "theirs",
    "myself": "themselves",
    "ourselves": "themselves",
    "you": "the assistant",
    "your": "the assistant's",
}
_PRONOUN = re.compile(r"\b(?:" + "|".join(sorted(_OBJECTS, key=len, reverse=True)) + r")\b", _FLAGS)
_THEY_BE = re.compile(r"\bthey\s+am\b|\bthey\s+was\b", _FLAGS)
_REMIND = re.compile(
    r"^(?:(?:can|could|would|will)\s+you\s+|please\s+)?remind\s+(?:me|us)\s+to\s+", _FLAGS
)
_SHOULD_I = re.compile(
    r"^(?:or\s+)?(?:should|shall|can|could)\s+(?:i|we)\s+(?:still\s+|just\s+|maybe\s+)?", _FLAGS
)
_DO_I_NEED = re.compile(r"^(?:do|does)\s+(?:i|we)\s+(?:really\s+)?need\s+", _FLAGS)
_DO_YOU_THINK = re.compile(
    r"^(?:do|does|would)\s+you\s+(?:think|know|reckon|say)\s+(?:if\s+|whether\s+|that\s+)?",
    _FLAGS,
)
_BE_FIRST = re.compile(
    r"^(?P<verb>(?i:is|are|was|were))\s+(?P<subject>it|this|that|there|they|he|she"
    r"|(?:the|my|our|this|that)\s+[\w'-]+|[A-Z][\w'-]*)\s+(?P<rest>.+)$"
)
# A time phrase before the subject ("Last week I tried..."): kept, the rest told as usual.
_LEAD_IN = re.compile(
    r"^(?P<when>(?:last|next|this)\s+\w+|yesterday|today|tomorrow|tonight|on\s+\w+day"
    r"|in\s+[A-Z]\w+),?\s+(?=(?:i|we|my|our)\b|(?:i|we)')",
    re.IGNORECASE,
)
_WH = re.compile(r"^(?:what|which|how|where|when|who|why)\b", _FLAGS)


def clean(sentence: str) -> str:
    """The sentence without fillers, opening discourse words and closing hedges."""
    text = _SOUNDS.sub(" ", sentence)
    text = _INNER_FILLER.sub(" ", text)
    text = _HEDGE_WORDS.sub("", text)
    question = text.rstrip().endswith("?")
    text = _END.sub("", text.rstrip("?").strip())
    for _ in range(3):  # hedges stack ("right, I think")
        text = _LEADING.sub("", text)
        text = _END.sub("", _TRAILING.sub("", text))
    text = " ".join(text.replace(" ,", ",").split())
    if not text:
        return ""
    return text[0].upper() + text[1:] + ("?" if question else "")


def _third_singular(verb: str) -> str:
    lowered = verb.lower()
    if lowered in _SUBJECT_VERBS:
        return _SUBJECT_VERBS[lowered]
    past = lowered.endswith("ed") and lowered not in _NOT_PAST
    if lowered in _UNCHANGED or lowered in _IRREGULAR_PAST or past or lowered.endswith("n't"):
        return verb
    if lowered.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(lowered) > 2 and lowered.endswith("y") and lowered[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _objects(text: str) -> str:
    """First-person and second-person words after the subject, in the third person."""
    text = _AND_I.sub(lambda m: m.group(0).split()[0] + " the user", text)

    def swap(match: re.Match[str]) -> str:
        return _OBJECTS[match.group(0).lower()]

    text = _PRONOUN.sub(swap, text)
    return _THEY_BE.sub(
        lambda m: "they are" if m.group(0).lower().endswith("am") else "they were", text
    )


def _with_user_subject(rest: str) -> str:
    """`rest` follows a first-person subject: its verb (after any adverbs) agrees with "User"."""
    words = rest.split(" ")
    for index, word in enumerate(words):
        if word.lower() in _ADVERBS:
            continue
        words[index] = _third_singular(word)
        break
    return "User " + _objects(" ".join(words))


def third_person(sentence: str, decision: bool = False) -> str:
    """A cleaned statement told about the user, ending with a full stop."""
    text = sentence.rstrip(".?!")
    if lead := _LEAD_IN.match(text):
        return f"{lead.group('when')} {third_person(text[lead.end() :], decision)}"
    if reminder := _REMIND.match(text):
        out = "User wants to be reminded to " + _objects(text[reminder.end() :])
    elif lets := _LETS.match(text):
        verb = "decided to " if decision else "wants to "
        out = "User " + verb + _objects(text[lets.end() :])
    elif subject := _SUBJECT.match(text):
        rest = text[subject.end() :]
        tail = (subject.group("tail") or "").lower()
        if tail:
            out = f"User {_CONTRACTED[tail]} " + _objects(rest)
        else:
            out = _with_user_subject(rest)
    elif possessive := _POSSESSIVE_START.match(text):
        out = "User's " + _objects(text[possessive.end() :])
    else:
        out = _objects(text)
    out = out.strip()
    return out[0].upper() + out[1:] + "." if out else ""


def question_text(question: str, still_open: bool) -> str:
    """A cleaned user question told about the user ("Should we move the sink?" -> "User is
    unsure whether to move the sink.")."""
    text = question.rstrip("?").strip()
    opener = "User is unsure whether" if still_open else "User asked whether"
    if should := _SHOULD_I.match(text):
        return f"{opener} to {_objects(text[should.end() :])}."
    if need := _DO_I_NEED.match(text):
        return f"{opener} they need {_objects(text[need.end() :])}."
    if think := _DO_YOU_THINK.match(text):
        return f"{opener} {_objects(text[think.end() :])}."
    if be := _BE_FIRST.match(text):
        subject = be.group("subject")
        subject = subject if subject[0].isupper() and subject != "It" else subject.lower()
        return (
            f"{opener} {_objects(subject)} {be.group('verb').lower()} {_objects(be.group('rest'))}."
        )
    if _WH.match(text):
        return f"User asked {_objects(text[0].lower() + text[1:])}."
    if not question.endswith("?"):  # "I'm not sure whether ..." and its kin
        return third_person(text)
    return f"User asked: {_objects(text[0].lower() + text[1:])}?"


def is_choice(question: str) -> bool:
    """Whether a question asks for a choice that a later decision settles."""
    return bool(CHOICE_QUESTION.search(question))


def bounded(text: str, limit: int) -> str:
    """One line of at most `limit` characters, cut at a word and marked with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def content_stems(text: str) -> frozenset[str]:
    """Stems of the words that carry content (no stop words, at least 3 letters, or digits)."""
    return frozenset(
        stem(word.lower())
        for word in words(text)
        if (len(word) >= 3 or word.isdigit()) and word.lower() not in CONVERSATION_STOP_WORDS
    )
