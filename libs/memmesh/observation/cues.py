"""Cue rules the deterministic Observer classifies a user sentence with: what kind of thing
it says, or that it says nothing worth keeping. Checked in order: an open question, then a
decision, a plan, a preference, an event; a statement with content is a fact."""

from __future__ import annotations

import re

from memmesh.observation.model import ObservationKind

_DAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS = r"january|february|march|april|may|june|july|august|september|october|november|december"
_I = r"(?:i|we)"
_BE = r"(?:'m|'re|\s+am|\s+are)"

DECISION = re.compile(
    rf"\blet's\s+(?:go\s+with|do|take|pick|use|book|get|stick\s+with|keep|choose)\b"
    rf"|\b{_I}(?:'ve|\s+have)?\s+(?:finally\s+)?decided\b|\bdecided\s+(?:on|to|against)\b"
    rf"|\b{_I}{_BE}\s+going\s+with\b|\b{_I}(?:'ll|\s+will)\s+(?:go\s+with|take|stick\s+with)\b"
    rf"|\b{_I}(?:'ve|\s+have)?\s+(?:chose|chosen|picked|opted\s+for|settled\s+on|went\s+with)\b"
    rf"|\b{_I}\s+agreed\b|\bsettled\s+on\b|\bthe\s+decision\s+is\b|\bgo(?:ing)?\s+with\s+the\b",
    re.IGNORECASE,
)
_FUTURE_TIME = (
    rf"\b(?:next\s+(?:week|month|year|time|{_DAYS})|tomorrow|tonight|soon|later\s+today"
    rf"|this\s+(?:weekend|week|month|evening|afternoon|summer|winter|spring|fall)"
    rf"|in\s+(?:{_MONTHS}|a\s+few|a\s+couple|two|three|\d+)|on\s+(?:{_DAYS}))\b"
)
PLAN = re.compile(
    rf"\b{_I}{_BE}\s+(?:going\s+to|gonna|planning\s+(?:to|on)|about\s+to|hoping\s+to)\b"
    rf"|\b{_I}\s+(?:also\s+|really\s+|still\s+|just\s+)?(?:plan|intend|need|have|want|hope)\s+to\b|\b{_I}(?:'ve|\s+have)\s+got\s+to\b"
    rf"|\b{_I}(?:'ll|\s+will|'d\s+like\s+to|\s+would\s+like\s+to)\b"
    rf"|\bnext\s+step\b|\b{_I}{_BE}\s+\w+ing\b.*{_FUTURE_TIME}|\blet's\b",
    re.IGNORECASE,
)
PREFERENCE = re.compile(
    rf"\b{_I}\s+(?:really\s+|also\s+|just\s+|still\s+|usually\s+|always\s+|absolutely\s+)?"
    rf"(?:prefer|like|love|enjoy|hate|dislike|adore|can't\s+stand|don't\s+(?:like|want|mind)"
    rf"|do\s+not\s+like)\b|\b{_I}(?:'d|\s+would)\s+rather\b|\bmy\s+(?:favou?rite|preferred)\b"
    rf"|\b{_I}{_BE}\s+(?:not\s+)?(?:a\s+(?:big\s+|huge\s+)?fan\s+of|into|allergic\s+to)\b",
    re.IGNORECASE,
)
_IRREGULAR_PAST = (
    r"went|had|got|made|took|came|saw|met|bought|found|gave|told|left|sold|sent|spent|paid|built"
    r"|began|broke|brought|drove|ate|fell|flew|forgot|heard|lost|wrote|won|ran|did|was|were"
)
EVENT = re.compile(
    r"\b(?:yesterday|last\s+(?:night|week|month|year|weekend|time)|ago|earlier\s+today"
    r"|this\s+morning)\b"
    rf"|^{_I}\s+(?:just\s+|already\s+|finally\s+|recently\s+)?(?:\w+ed|{_IRREGULAR_PAST})\b",
    re.IGNORECASE,
)
# Statements that a question is still open, without a question mark.
UNDECIDED = re.compile(
    r"\b(?:not\s+sure|unsure|haven't\s+decided|have\s+not\s+decided|undecided|still\s+deciding"
    r"|can't\s+decide|wondering|need\s+to\s+figure\s+out"
    r"|don't\s+know\s+(?:if|whether|what|which|how))\b",
    re.IGNORECASE,
)
# A question that asks for a choice: it stays open until a later decision answers it.
CHOICE_QUESTION = re.compile(
    r"^(?:should|shall)\s+(?:i|we)\b|\bwhether\b|^(?:do|does)\s+you\s+think\b"
    r"|^(?:is|are)\s+it\s+worth\b|^(?:or\s+)?should\s+(?:i|we)\b|\b(?:or|vs\.?|versus)\b",
    re.IGNORECASE,
)
ACKNOWLEDGEMENT = re.compile(
    r"^(?:(?:that|this|it)\s+)?(?:sounds|looks|seems)\s+(?:good|great|perfect|fine|nice)"
    r"|^(?:thanks?(?:\s+you)?|thank\s+you|perfect|great|cool|awesome|nice|got\s+it|okay|ok"
    r"|sure|bye|goodbye|hello|hi|hey|good\s+(?:morning|night|evening|afternoon)|no\s+worries"
    r"|you're\s+welcome|see\s+you)\b",
    re.IGNORECASE,
)
REMINDER = re.compile(r"\bremind\s+(?:me|us)\s+to\b", re.IGNORECASE)
# Requests to the assistant for something now (a timer, a song): not memory.
REQUEST = re.compile(
    r"^(?:(?:can|could|would|will)\s+you\s+(?!remind\b)|please\s+)"
    r"|^(?:play|set|turn|stop|start|open|show|tell|give|read|search|look\s+up|find|pause"
    r"|skip|add|call|text|check|help|repeat|say)\b|^you\b",
    re.IGNORECASE,
)


def kind_of(sentence: str) -> ObservationKind | None:
    """The kind of a cleaned user sentence; None when it is not worth keeping."""
    if ACKNOWLEDGEMENT.match(sentence):
        return None
    if REMINDER.search(sentence):
        return ObservationKind.PLAN
    if REQUEST.match(sentence):
        return None
    if sentence.endswith("?") or UNDECIDED.search(sentence):
        return ObservationKind.QUESTION
    if DECISION.search(sentence):
        return ObservationKind.DECISION
    if PLAN.search(sentence):
        return ObservationKind.PLAN
    if PREFERENCE.search(sentence):
        return ObservationKind.PREFERENCE
    if EVENT.search(sentence):
        return ObservationKind.EVENT
    return ObservationKind.FACT
