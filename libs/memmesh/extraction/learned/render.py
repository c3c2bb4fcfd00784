"""Turn a clause the classifier kept into a seed 000 fact statement about the user.

The statement keeps the user's own words (so it stays grounded) with three changes: the
speaker becomes "User", episodic time phrases ("last month", "in March", "about a year ago")
are cut because the fact outlives the event, and discourse lead-ins are dropped.
"""

from __future__ import annotations

import re

from ..phrases import EPISODIC_PURPOSE
from ..text import (
    LEARNED_DEFAULT_LEAD,
    LEARNED_LEADS,
    conjugate_3sg,
    sentence_case_fact,
    slug,
)

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_NUMBER = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple(?: of)?|\d+)"
_UNIT = r"(?:days?|weeks?|months?|years?|decades?|summers?|winters?)"
_EPISODIC_TIME = re.compile(
    r"\s*\b(?:"
    rf"(?:about|around|like|almost|nearly|over|roughly|maybe|just)?\s*{_NUMBER}\s+(?:and a half\s+)?{_UNIT}\s+ago"
    r"|(?:since|from|back in|in|during|this|last|next|early|late)\s+(?:early\s+|late\s+)?"
    rf"(?:{_MONTHS})\b(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?(?:\s+\d{{4}})?"
    r"|(?:since|from|back in|in|during)\s+(?:19|20)\d\d"
    r"|(?:last|this|next|past)\s+(?:week|weekend|month|year|summer|winter|spring|fall|autumn|"
    r"night|time|semester)"
    r"|(?:yesterday|today|tonight|tomorrow|the other day|recently|lately|just now)"
    r"|(?:a while|some time|a bit|a long time) (?:ago|back)"
    r")\b",
    re.I,
)
_LEAD_IN = re.compile(
    # "no" only as an answer ("no, I…"): "no root vegetables" limits, and keeps its "no".
    r"^(?:(?:oh|ah|well|so|and|but|also|plus|anyway|anyways|yeah|yes|no(?=[,!:]|\s+(?:I|I'm|"
    r"I've|my|we|it|that|you)\b)|ok|okay|right|"
    r"quick thing|real quick|fun fact|for the record|just so you know|heads up|btw|"
    r"honestly|actually|basically|seriously|i mean|oh and|oh also)[,!:]?\s+)+",
    re.I,
)
_TRAILING = re.compile(
    r"[\s,;:-]+(?:please|thanks|thank you|lol|haha|ok|okay|though|too|as well)?[\s.!?]*$", re.I
)
_ADVERB = re.compile(
    # Not the verbs that end in "ly" ("I rely on my wheelchair", "I fly a lot for work").
    r"^(?!(?:rely|reply|apply|supply|comply|imply|fly|multiply|bully|ally|tally)$)"
    r"(?:\w+ly|also|still|just|always|never|ever|only|even|totally|pretty much)$",
    re.I,
)
_VERB_3SG = {
    "am": "is",
    "'m": "is",
    "have": "has",
    "do": "does",
    "don't": "doesn't",
    "dont": "doesn't",
    "go": "goes",
    "can": "can",
    "can't": "can't",
    "cannot": "cannot",
    "could": "could",
    "couldn't": "couldn't",
    "will": "will",
    "won't": "won't",
    "would": "would",
    "wouldn't": "wouldn't",
    "should": "should",
    "must": "must",
    "might": "might",
    "was": "was",
    "wasn't": "wasn't",
    "had": "had",
    "did": "did",
    "didn't": "didn't",
    "need": "needs",
    "haven't": "hasn't",
    "aren't": "isn't",
}
_IRREGULAR_PAST = frozenset(
    """went got grew became began came left took gave made found knew thought brought bought
caught taught felt kept lost met paid ran said sent sold spent stood told understood won wrote
drove ate fell forgot quit hurt put broke chose did had was were used swore wore rode flew
hid let set shut spoke stole struck swam threw woke""".split()
)
_CONTRACTED_SUBJECT = (
    (re.compile(r"^I'm\b", re.I), "User is"),
    (re.compile(r"^I've\b", re.I), "User has"),
    (re.compile(r"^I'd\b", re.I), "User would"),
    (re.compile(r"^I'll\b", re.I), "User will"),
    (re.compile(r"^my\b", re.I), "User's"),
    (re.compile(r"^me and my\b", re.I), "User and their"),
    (re.compile(r"^we're\b", re.I), "User's household is"),
    (re.compile(r"^we've\b", re.I), "User's household has"),
    (re.compile(r"^we\b", re.I), "User's household"),
)
_INNER_PRONOUNS = (
    (re.compile(r"\bI'm\b"), "they're"),
    (re.compile(r"\bI am\b"), "they are"),
    (re.compile(r"\bI've\b"), "they've"),
    (re.compile(r"\bI'd\b"), "they'd"),
    (re.compile(r"\bI'll\b"), "they'll"),
    (re.compile(r"\bI\b"), "they"),
    (re.compile(r"\bmyself\b", re.I), "themselves"),
    # "mine's Frasier" is "mine is", not a possessive.
    (re.compile(r"\bmine's\b", re.I), "theirs is"),
    (re.compile(r"\bmine\b", re.I), "theirs"),
    (re.compile(r"\bmy\b", re.I), "their"),
    (re.compile(r"\bme\b", re.I), "them"),
    (re.compile(r"\bours\b", re.I), "theirs"),
    (re.compile(r"\bour\b", re.I), "their"),
    (re.compile(r"\bus\b", re.I), "them"),
)
# What a statement says before its content: "User", "User's household", a lead-in above.
_STATEMENT_LEAD = re.compile(
    r"^User(?:'s)?(?: (?:household|"
    + "|".join(
        re.escape(lead.removeprefix("User's "))
        for lead in (*LEARNED_LEADS.values(), LEARNED_DEFAULT_LEAD)
    )
    + r"))?\s+(?:is|has)?\s*"
)


def strip_episodic_time(text: str) -> str:
    """Remove time phrases that date an event, keeping the durable rest of the clause."""
    return re.sub(r"\s{2,}", " ", _EPISODIC_TIME.sub("", text)).strip(" ,")


def fact_body(clause: str) -> str:
    """The clause without lead-ins, trailing courtesy words, episodic time phrases and the
    one-off occasion it is for."""
    body = _LEAD_IN.sub("", clause.strip())
    body = EPISODIC_PURPOSE.sub("", body)
    body = strip_episodic_time(body)
    body = _TRAILING.sub("", body)
    return body.strip(" ,.;:-")


def render_fact(clause: str, category: str) -> str:
    """A statement starting with "User" in the third person, grounded in the clause's words."""
    body = fact_body(clause)
    if not body:
        return ""
    words = body.split()
    subject = {"i": "User", "we": "User's household"}.get(words[0].lower())
    if subject is not None and (subject == "User" or _verb_follows(words[1:])):
        rest = words[1:]
        head: list[str] = []
        while rest and _ADVERB.match(rest[0]):
            head.append(rest.pop(0))
        if rest:
            verb = rest.pop(0)
            head.append(_third_person_verb(verb))
        statement = " ".join([subject, *head, *rest])
    else:
        statement = body
        for pattern, replacement in _CONTRACTED_SUBJECT:
            if pattern.match(statement):
                statement = pattern.sub(replacement, statement, count=1)
                break
        else:
            lead_in = LEARNED_LEADS.get(category, LEARNED_DEFAULT_LEAD)
            statement = f"{lead_in} {statement}"
    # The leading "User" is fixed; pronouns after it are rewritten to a narrator's view.
    lead, _, tail = statement.partition(" ")
    for pattern, replacement in _INNER_PRONOUNS:
        tail = pattern.sub(replacement, tail)
    return sentence_case_fact(f"{lead} {tail}")


# After "we", words that are no verb of the household's ("we both", "we all", "we two").
_NOT_A_VERB = frozenset("both all each two three together are were".split())


def _verb_follows(words: list[str]) -> bool:
    """ "we live on a narrowboat" reads as "User's household lives…"; not "we both…"."""
    verbs = [w.lower() for w in words if not _ADVERB.match(w)]
    if not verbs:
        return False
    return verbs[0] in _VERB_3SG or (verbs[0].isalpha() and verbs[0] not in _NOT_A_VERB)


def _third_person_verb(verb: str) -> str:
    low = verb.lower()
    if low in _VERB_3SG:
        return _VERB_3SG[low]
    if low in _IRREGULAR_PAST or low.endswith(("ed", "n't")) or not low.isalpha():
        return verb
    return conjugate_3sg(verb)


def fact_key(category: str, statement: str) -> str:
    """A stable key for a learned fact: its category and the slug of the content words of
    its statement (as `render_fact` wrote it)."""
    content = slug(_STATEMENT_LEAD.sub("", statement))[:80].strip("_") or "general"
    content = re.sub(r"[^a-z0-9_+#'-]", "", content.lower()) or "general"
    return f"{category}.learned.{content}"
