"""Polite and learner wordings of a request, said as the plain imperative the command rules
read: "would you mind erasing my old address" asks what "please erase my old address" asks,
"I'd really appreciate it if you didn't raise the wedding" what "please don't raise the
wedding" does, "forget please the address" what "please forget the address" does, and "stop
to mention it" what "stop mentioning it" does. Only the wrapper is rewritten; the words of
what is asked stay as they were said.
"""

from __future__ import annotations

import re

# The verbs a memory command is said with. Those that double their last letter before "-ing"
# are listed apart; a final silent "e" is dropped ("erase" -> "erasing").
_VERBS = """forget delete erase remove wipe scrub scratch purge clear drop discard trash reset
save store keep record log note remember memorize memorise track mention raise bring discuss
talk speak reference use resume continue revisit reopen go come get pick carry tell show give
list read run hold start stop quit volunteer surface write put leave remind""".split()
_DOUBLED = frozenset("scrub drop log get run stop quit forget".split())


def _gerund(verb: str) -> str:
    if verb in _DOUBLED:
        return f"{verb}{verb[-1]}ing"
    if verb.endswith("e") and not verb.endswith("ee"):
        return f"{verb[:-1]}ing"
    return f"{verb}ing"


# The tables hold ASCII spellings: the patterns fold case in ASCII only ("ſ" is no "s").
_BASE_OF = {_gerund(verb): verb for verb in _VERBS}
_GERUND_OF = {verb: _gerund(verb) for verb in _VERBS}
_GERUNDS = "|".join(sorted(_BASE_OF, key=len, reverse=True))
_BASES = "|".join(sorted(_GERUND_OF, key=len, reverse=True))
_SOFTENERS = r"(?:(?:terribly|awfully|too much|very much|so much|just|maybe|please|kindly)\s+)*"

# "would you mind erasing …", "do you mind not keeping …" (not "I don't mind forgetting").
_WOULD_YOU_MIND = re.compile(
    rf"\b(?:would|do|could)\s+you\s+(?:please\s+|kindly\s+)?mind\s+{_SOFTENERS}"
    rf"(?P<negation>not\s+)?(?P<verb>{_GERUNDS})\b",
    re.I | re.A,
)
# "I'd really appreciate it if you didn't raise …", "I would be grateful if you could delete
# …", "I'd prefer it if you stopped mentioning …", "it would help if you forgot …".
_IF_YOU = re.compile(
    r"\b(?:I'd|I would|it'd|it would)\s+(?:really\s+|so\s+|truly\s+|very much\s+|much\s+|"
    r"honestly\s+|also\s+)*(?:appreciate(?:\s+it)?|love(?:\s+it)?|prefer(?:\s+it)?|like(?:\s+it)?|"
    r"be\s+(?:very\s+|so\s+|really\s+)?(?:grateful|thankful|happier|glad)|help|mean a lot)\s+"
    rf"if\s+you\s+{_SOFTENERS}(?:(?P<negation>didn't|did not|wouldn't|would not|could not|"
    r"couldn't|never|no longer|stopped|quit)\s+|(?:could|would|can|will)\s+)?"
    rf"{_SOFTENERS}(?P<verb>{_GERUNDS}|{_BASES}|forgot|kept|brought|stopped)\b",
    re.I | re.A,
)
_PAST = {"forgot": "forget", "kept": "keep", "brought": "bring", "stopped": "stop"}
# "forget please the address", "delete kindly what I said": the politeness word after the
# verb, as several languages place it.
_VERB_THEN_PLEASE = re.compile(
    rf"(?:^|(?<=[,.!?;]\s)|(?<=\band\s))(?P<verb>{_BASES})\s+(?P<please>please|kindly)\s+"
    r"(?=(?:the|my|our|what|that|this|all|everything|it|about)\b)",
    re.I | re.A,
)
# "please stop to mention it": a learner's "stop to" for "stop …-ing".
_STOP_TO = re.compile(rf"\b(?P<stop>stop|quit)\s+to\s+(?P<verb>{_BASES})\b", re.I | re.A)
# "please, you don't talk anymore about my old job": a learner's request said as a statement
# of what the assistant does, after a "please".
_PLEASE_YOU_DONT = re.compile(
    rf"\b(?P<please>please),?\s+you\s+(?P<negation>don't|do not|not)\s+(?P<verb>{_BASES})\b",
    re.I | re.A,
)


# "don't like write this down": a spoken "like" between the request and its verb says
# nothing ("I don't like writing" keeps its "like": a gerund follows it, not a bare verb).
_FILLER_LIKE = re.compile(
    rf"\b(?P<ask>don't|do not|please|just|can you|could you)\s+(?:like|kinda|sort of),?\s+"
    rf"(?=(?:{_BASES})\b)",
    re.I,
)


# "can you for get today's session": a recogniser's "forget" in two words.
_FOR_GET = re.compile(r"\bfor get\b(?!-)", re.I)


def plain_request(text: str) -> str:
    """The text with each polite or learner wrapper of a request said as the plain
    imperative; text without one is returned as it is."""
    text = _FOR_GET.sub("forget", text)
    text = _FILLER_LIKE.sub(lambda m: f"{m['ask']} ", text)
    text = _WOULD_YOU_MIND.sub(_unwrapped_mind, text)
    text = _IF_YOU.sub(_unwrapped_if_you, text)
    text = _VERB_THEN_PLEASE.sub(lambda m: f"{m['please']} {m['verb']} ", text)
    text = _STOP_TO.sub(lambda m: f"{m['stop']} {_GERUND_OF[m['verb'].lower()]}", text)
    return _PLEASE_YOU_DONT.sub(lambda m: f"{m['please']} don't {m['verb']}", text)


def _unwrapped_mind(found: re.Match[str]) -> str:
    verb = _BASE_OF[found["verb"].lower()]
    return f"please don't {verb}" if found["negation"] else f"please {verb}"


def _unwrapped_if_you(found: re.Match[str]) -> str:
    verb = found["verb"].lower()
    verb = _PAST.get(verb) or _BASE_OF.get(verb) or verb
    negation = (found["negation"] or "").lower()
    if negation in ("stopped", "quit"):
        return f"please stop {_GERUND_OF.get(verb, verb)}"
    if negation:
        return f"please don't {verb}"
    return f"please {verb}"
