"""Standing instructions about how the assistant should respond (constraint category)."""

from __future__ import annotations

import re

from .context import INSTRUCTION_MARKERS, ClauseContext, build
from .lexicon import INSTRUCTION_VERBS, LANGUAGES, UNIT_SYSTEMS
from .model import Candidate
from .text import Clause, conjugate_3sg, slug, third_person

_IMPERATIVE = re.compile(
    r"^(?:please\s+|can you\s+|could you\s+|would you\s+|just\s+|and\s+|oh,?\s+|also\s+|"
    r"in general,?\s+|"
    r"when(?:ever)?\s+you\s+(?:answer|reply|respond|write)(?:\s+me)?,?\s+)*"
    r"(?P<freq>always|never|only|don't ever|do not ever|don't|do not|from now on|going forward)?\s*"
    rf"(?P<verb>{INSTRUCTION_VERBS})\b\s*(?P<rest>.*)$",
    re.I,
)
_RATHER_YOU = re.compile(
    r"^I(?:'d| would)\s+(?:rather|prefer)\s+(?:it\s+if\s+)?you\s+(?:to\s+)?(?P<rest>.+)$|"
    r"^I\s+(?:want|need)\s+you\s+to\s+(?P<rest2>(?:always|never)\s+.+)$",
    re.I,
)
_ANSWER_STYLE = re.compile(
    r"^I\s+(?:need|want|like|prefer)\s+(?:my\s+|your\s+|the\s+)?(?P<what>answers|responses|"
    r"replies|explanations|summaries|instructions)\s+(?P<how>.+)$",
    re.I,
)
_WANT_IN = re.compile(
    r"^I\s+(?:want|need|like|prefer)\s+(?P<what>everything|all|my|anything)"
    r"(?P<rest>.*?\s+in\s+.+)$",
    re.I,
)
_NO_X_ON = re.compile(
    r"^(?:[^:]{1,40}:\s*)?(?:(?:no|never any|please no)\s+(?P<what>meetings|calls|appointments|"
    r"reminders|notifications|messages|emails|texts|alarms)|"
    # "set it in stone: nothing before 10am", "nothing goes on my calendar before 9am"
    r"nothing(?:\s+(?:goes\s+on\s+my\s+calendar|on\s+my\s+calendar|scheduled|booked))?)\s+"
    r"(?P<when>(?:on|before|after|during)\s+[\w -]+?)(?:,?\s+ever)?$",
    re.I,
)
_RECURRING = re.compile(
    r"\b(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|"
    r"weekends|weekdays|mornings|evenings|nights|lunch|\d+\s*(?:am|pm))\b",
    re.I,
)
_UNIT_HABIT = re.compile(
    r"^I\s+(?P<freq>only|always|never|don't|do not)\s+(?:use|measure in|"
    r"cook with|think in|work in)\s+(?P<obj>.+)$",
    re.I,
)
_UNIT_WORDS = re.compile(
    r"\b(?:cups?|ounces?|oz|pounds?|lbs?|grams?|kilos?|kilograms?|inches?|"
    r"feet|miles?|kilometers?|kilometres?|fahrenheit|celsius|metric|"
    r"imperial|liters?|litres?|gallons?|tablespoons?|teaspoons?)\b",
    re.I,
)


def instruction_candidates(ctx: ClauseContext) -> list[Candidate]:
    """Standing instructions (units, language, format, schedule) stated in the clause."""
    for rule in (_imperative, _rather_you, _answer_style, _want_in, _no_x_on):
        found = rule(ctx)
        if found:
            return found
    return []


def unit_system_candidates(
    clauses: tuple[Clause, ...], contexts: list[ClauseContext]
) -> tuple[list[Candidate], set[int]]:
    """One fact for "convert this to metric, I never use cups": the system plus the habit."""
    system = None
    for clause in clauses:
        for word in ("metric", "imperial", "celsius", "fahrenheit"):
            if re.search(rf"\b{word}\b", clause.text, re.I):
                system = system or word
    if not system:
        return [], set()
    for ctx in contexts:
        match = _UNIT_HABIT.match(ctx.text)
        if match and _UNIT_WORDS.search(match.group("obj")):
            freq = match.group("freq").lower()
            adverb = "never" if freq in ("never", "don't", "do not") else freq
            habit = f"{adverb} uses {third_person(match.group('obj'))}"
            if system.lower() in match.group("obj").lower():
                text = f"User {habit}"
            else:
                text = f"User uses {system} units and {habit}"
            return [
                build(
                    ctx,
                    text,
                    "constraint",
                    f"constraint.units.{UNIT_SYSTEMS[system]}",
                    9200,
                    INSTRUCTION_MARKERS,
                )
            ], {ctx.clause.index}
    return [], set()


def _topic_key(phrase: str) -> str:
    lowered = phrase.lower()
    for word, dimension in UNIT_SYSTEMS.items():
        if re.search(rf"\b{re.escape(word)}\b", lowered):
            return f"constraint.units.{dimension}"
    for word in lowered.split():
        if word.strip(".,") in LANGUAGES and re.search(r"\bin\s+" + re.escape(word), lowered):
            return "constraint.language.response"
    if re.search(r"\bemojis?\b", lowered):
        return "constraint.format.emoji"
    if re.search(
        r"\b(?:short|brief|concise|long|detail|detailed|bullet|step[- ]by[- ]step|"
        r"beginner|simple|technical)\b",
        lowered,
    ):
        return "constraint.format.detail"
    return f"constraint.instruction.{slug(' '.join(lowered.split()[:3]))}"


def _imperative(ctx: ClauseContext) -> list[Candidate]:
    match = _IMPERATIVE.match(ctx.text)
    if not match or re.match(r"^(?:I|my)\b", ctx.text, re.I):
        return []
    rest = match.group("rest").strip()
    if not (
        ctx.has_standing_marker() or _standing_by_topic(match) or _about_every_answer(ctx, match)
    ):
        return []
    if not rest or re.match(r"^(?:it|that|this|me)\s*$", rest, re.I):
        return []
    freq = (match.group("freq") or "").lower()
    trailing = ctx.trailing.lower()
    if not freq:
        in_text = re.search(r"\b(always|never)\b", ctx.text, re.I)
        freq = in_text.group(1).lower() if in_text else ("always" if "always" in trailing else "")
        rest = re.sub(r",?\s*\b(?:always|never)\b\s*$", "", rest, flags=re.I)
    freq = {
        "don't ever": "never",
        "do not ever": "never",
        "don't": "not",
        "do not": "not",
        "from now on": "from now on",
        "going forward": "from now on",
    }.get(freq, freq)
    verb = match.group("verb").lower()
    rest = re.sub(r",?\s+(?:though|please)$", "", rest, flags=re.I)
    said_of = _answers_said_of(ctx) if verb == "keep" and _KEPT_SHORT.match(rest) else None
    if said_of:
        # "when you reply, keep it short" keeps the replies short, in the user's own word.
        rest = _UNNAMED_ANSWERS.sub(said_of, rest)
    action = f"{verb} {third_person(rest)}".strip()
    if freq == "from now on":
        body = f"{action} from now on"
    elif freq == "not":
        body = f"not {action}"
    else:
        body = f"{freq} {action}".strip()
    body = re.sub(
        r"\b(when|whenever|if) the assistant (\w+)",
        lambda m: f"{m.group(1)} the assistant {conjugate_3sg(m.group(2))}",
        body,
    )
    return [
        build(
            ctx,
            f"User wants the assistant to {body}",
            "constraint",
            _topic_key(rest),
            9500,
            INSTRUCTION_MARKERS,
        )
    ]


# "don't book anything over prayer times", "don't plan anything on weekends": a calendar rule.
_SCHEDULING_VERBS = frozenset("schedule book plan put".split())
_RECURRING_SLOT = re.compile(rf"{_RECURRING.pattern}|\b(?:prayer|prayers|prayer times)\b", re.I)
# "reply in English", "use easy words", "cite sources": how every answer should look.
_RESPONSE_VERBS = frozenset("use answer reply respond talk speak write explain cite quote".split())
_RESPONSE_FORM = re.compile(
    r"\b(?:easy|plain|simple|short|brief|concise|bullet|bullets|numbered|step[- ]by[- ]step|"
    r"sources?|references?|formal|informal|casual)\b",
    re.I,
)
# "write this in French", "write a short note": one task, not a standing rule.
# Verbs whose object is usually the topic of one answer: a rule only without a topic
# ("explain things simply", "write in plain English", "cite your sources").
_OBJECT_VERBS = frozenset("explain write cite quote".split())
_NO_TOPIC = re.compile(
    r"(?:things|everything|stuff|it all|in|with|using|like|(?:your\s+)?(?:sources?|references?))\b",
    re.I,
)
_ONE_TASK_OBJECT = re.compile(
    r"\b(?:this|that|it|these|those|the (?!time)\w+)\b|^(?:me\s+|for me\s+)?(?:a|an|one)\s", re.I
)


# "keep your answers short", "when you answer me, keep it short": how long every answer is.
_KEPT_SHORT = re.compile(
    r"^(?:(?:your|the|all|my)\s+(?:answers|replies|responses|messages|explanations)|it|things)"
    r"\s+(?:short|brief|concise|simple|to the point)\b",
    re.I,
)
_UNNAMED_ANSWERS = re.compile(r"^(?:it|things)\b", re.I)
_WHEN_YOU_ANSWER = re.compile(
    r"\b(?:when|whenever|every time)\s+you\s+(?P<verb>answer|reply|respond|explain|talk to me|"
    r"write)",
    re.I,
)
_ANSWER_NOUNS = {
    "answer": "answers",
    "reply": "replies",
    "respond": "responses",
    "explain": "explanations",
}


def _when_you_answer(ctx: ClauseContext) -> re.Match[str] | None:
    """The words "when you answer me …" in the clause or in the one right before it."""
    for text in (ctx.text, *(clause.text for clause in ctx.previous()[-1:])):
        found = _WHEN_YOU_ANSWER.search(text)
        if found:
            return found
    return None


def _answers_said_of(ctx: ClauseContext) -> str | None:
    """The noun for the answers "when you answer/reply …" speaks of ("replies" for "when you
    reply")."""
    found = _when_you_answer(ctx)
    return _ANSWER_NOUNS.get(found["verb"].lower()) if found else None


def _about_every_answer(ctx: ClauseContext, match: re.Match[str]) -> bool:
    """Whether "keep … short" is said of every answer: of the answers themselves, or with
    "when you answer me" in the clause or right before it."""
    rest = match.group("rest")
    if match.group("verb").lower() != "keep" or not _KEPT_SHORT.match(rest):
        return False
    return not _UNNAMED_ANSWERS.match(rest) or _when_you_answer(ctx) is not None


def _standing_by_topic(match: re.Match[str]) -> bool:
    """Whether an imperative holds beyond this turn by what it is about: a recurring slot kept
    free, or the form, language or units of every answer."""
    verb, rest = match.group("verb").lower(), match.group("rest")
    freq = (match.group("freq") or "").lower()
    if verb in _SCHEDULING_VERBS:
        return freq in ("don't", "do not", "never") and bool(_RECURRING_SLOT.search(rest))
    if verb not in _RESPONSE_VERBS or _ONE_TASK_OBJECT.search(rest):
        return False
    if verb in _OBJECT_VERBS and not _NO_TOPIC.match(rest):
        return False  # "explain photosynthesis step by step": one answer's topic
    return bool(_RESPONSE_FORM.search(rest)) or _topic_key(rest).startswith(
        ("constraint.units", "constraint.language")
    )


def _rather_you(ctx: ClauseContext) -> list[Candidate]:
    match = _RATHER_YOU.match(ctx.text)
    if not match:
        return []
    rest = match.group("rest") or match.group("rest2")
    if re.search(
        r"\b(?:now|today|tonight|this time|right now|that|this|it)\b|^(?:\w+ed|didn't|"
        r"weren't|wasn't)\b",
        rest,
        re.I,
    ):
        return []
    action = third_person(rest)
    action = re.sub(
        r"\bwhen the assistant (\w+)",
        lambda m: "when the assistant " + conjugate_3sg(m.group(1)),
        action,
    )
    return [
        build(
            ctx,
            f"User wants the assistant to {action}",
            "constraint",
            _topic_key(rest),
            9000,
            INSTRUCTION_MARKERS,
        )
    ]


def _answer_style(ctx: ClauseContext) -> list[Candidate]:
    match = _ANSWER_STYLE.match(ctx.text)
    if not match or re.search(r"\b(?:now|today|tonight|this time|right now)\b", ctx.text, re.I):
        return []
    what, how = match.group("what").lower(), third_person(match.group("how"))
    verb = ctx.text.split()[1].lower()
    verb = {"need": "needs", "want": "wants", "like": "likes", "prefer": "prefers"}[verb]
    return [
        build(
            ctx,
            f"User {verb} {what} {how}",
            "constraint",
            _topic_key(f"{what} {how}"),
            9000,
            INSTRUCTION_MARKERS,
        )
    ]


def _want_in(ctx: ClauseContext) -> list[Candidate]:
    match = _WANT_IN.match(ctx.text)
    if not match or not ctx.has_standing_marker():
        return []
    what = f"{match.group('what')}{match.group('rest')}"
    what = re.sub(r",?\s*\balways\b\s*$", "", what, flags=re.I)
    return [
        build(
            ctx,
            f"User wants {third_person(what)}",
            "constraint",
            _topic_key(what),
            9300,
            INSTRUCTION_MARKERS,
        )
    ]


def _no_x_on(ctx: ClauseContext) -> list[Candidate]:
    match = _NO_X_ON.match(ctx.text)
    if not match or not (_RECURRING.search(match.group("when")) or ctx.has_standing_marker()):
        return []
    what, when = (match.group("what") or "").lower(), match.group("when")
    said = f"no {what} {when}" if what else f"nothing scheduled {when}"
    return [
        build(
            ctx,
            f"User wants {said}",
            "constraint",
            f"constraint.schedule.{slug(what or 'anything')}",
            9200,
            INSTRUCTION_MARKERS,
        )
    ]
