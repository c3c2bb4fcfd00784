"""Clause-level signals that a statement is not a durable fact (seed 000 exclusions)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .lexicon import EMOTION_WORDS
from .text import Clause

HYPOTHETICAL = "hypothetical"
HEDGED = "hedged"
PLAN = "plan_or_intention"
TIME_BOUND = "time_bound"
QUESTION = "question"
SARCASM = "sarcasm_or_joke"
THIRD_PARTY_OPINION = "third_party_opinion"
VENTING = "venting"

_HYPOTHETICAL = re.compile(
    r"^(?:if|say|let's say|lets say|suppose|supposing|imagine|what if|even if|in case|assuming|"
    r"hypothetically)\b|"
    # "I'd never willingly eat an olive" refuses for good ("I'd never been" is "I had").
    r"\bif I\b|\bI wish\b|\bI'd\b(?!\s+(?:rather|prefer|like you|appreciate|love it if you|"
    r"never\s+(?!been|seen|heard|had|done|tried|met|gone|known|thought|eaten|used)[a-z]+))|"
    r"\bI would\b(?!\s+(?:rather|prefer))|\bwould be\b",
    re.I,
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|I guess|I suppose|I think|I dunno|dunno|kinda|sorta|"
    r"not sure|who knows|might|could be|I feel like|seems? like|I don't know|no idea|"
    r"more or less|sometimes|somewhat|or something|ish|may have|may be|wondering (?:whether|if))\b|"
    r"(?<!what )(?<!which )(?<!that )(?<!this )(?<!any )(?<!every )(?<!some )\bkind of\b|"
    r"(?<!what )\bsort of\b",
    re.I,
)
# "maybe it matters", "not sure if you had that", "in case it's useful": a word on whether what
# was said is news to the listener or of use, not a hedge on it.
RELEVANCE_ASIDE = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly)\s+(?:it|that|this)(?:'s|\s+is|\s+(?:might|may|could|"
    r"will|would)\s+be)?\s+(?:matters?|helps?|relevant|useful|important|helpful|good to know)\b|"
    r"\b(?:it|that|this)\s+(?:might|may|could)\s+(?:matter|help|be (?:relevant|useful|important|"
    r"helpful))\b|"
    r"\b(?:not sure|I don't know|I dont know|dunno|no idea)\s+(?:if|whether)\s+you\b[^,.;!?]*",
    re.I,
)
# "planning" as what the user is doing, not the field ("a masters in urban planning").
_PLAN = re.compile(
    # "…is never going to happen" says what will not come, no plan of the user's.
    r"\b(?:going to(?!\s+happen\b)|planning(?=\s+(?:to|on|a|an|the|my|our|for|it|this|that|some|out|ahead)\b)|"
    r"(?:'m|am|are|'re|re|is|'s|was|were|been|be|still|being|really)\s+planning|plan to|plan on|thinking (?:about|of)|want to|hoping to|hope to|"
    # "I will never say no to salted licorice": what always holds, not what is to come.
    r"trying to|try to|about to|intend|considering|someday|one day|soon|"
    r"will(?!\s+(?:never|always|happily)\b)|I'll(?!\s+(?:never|always|happily)\b)|"
    r"gonna(?!\s+happen\b)|starting|startin|next (?:week|month|year|time|summer|winter|spring|fall)|"
    r"signing up|sign up|(?P<season>in the (?:spring|summer|fall|autumn|winter))|"
    # "we're moving to Porto in March": a move under way is still to come.
    r"(?:'re|'m|re|m|are|am)\s+(?:moving|relocating|emigrating)\s+"
    r"(?:to|back|abroad|away|out|house|across)|"
    r"(?:we|I)\s+(?:move|relocate|emigrate)\s+(?:to\s+\S+\s+)?(?:in|on|next|this)\b)\b",
    re.I,
)
# "we moved in the spring" reports what happened; only without a past verb is a season a plan.
_PAST_VERB = re.compile(
    r"\b(?:moved|relocated|emigrated|adopted|started|began|got|went|was|were|had|did)\b", re.I
)
_TIME_BOUND = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|this (?:morning|afternoon|evening|week|weekend|month|"
    r"year|semester|term|summer|winter|spring|fall|time)|right now|rn|at the moment|currently|"
    r"for now|for the (?:next|rest of)|until|till|lately|recently|just now|"
    # A month's challenge: "doing dry January", "Veganuary".
    r"dry january|sober october|veganuary|movember|no-?spend (?:month|january)|"
    r"(?:an?|one|two|three|four|five|six|\d+) (?:minutes?|hours?|days?|weeks?) ago|an hour ago|"
    # "since last year" dates when a lasting state began ("I'm vegetarian since last year").
    r"last (?:night|week|weekend|time)|(?<!since )last (?:month|year)|temporarily|"
    r"for a (?:few|couple of) (?:days|weeks)|"
    # "vegan for Lent" gives something up for one season; "every Lent" keeps doing it.
    r"for (?:Lent|Advent|Passover|Ramadan|Dry January|Veganuary|Sober October)\b"
    r"(?!.*\b(?:every|each) (?:year|time|Lent|Advent|Passover|Ramadan)\b)|"
    # "on sunday mornings" says what keeps happening, as "on sundays" does.
    r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"(?!s|\s+(?:mornings|afternoons|evenings|nights))|all week|"
    # "I'm stuck at the airport", not "I work at the airport".
    r"(?<!work )(?<!works )(?<!working )(?<!nights )at the airport|stuck)\b",
    re.I,
)
# "for a month" bounds a present state; "have been … for a month" reports a lasting one.
_SHORT_SPAN = re.compile(
    r"\bfor (?:a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d+|a few|"
    r"a couple of|another)(?:\s+(?:more|extra|whole))? (?:days?|weeks?|months?|while|bit)\b",
    re.I,
)
_SARCASM_CUE = re.compile(
    r"\b(?:oh sure|oh yeah|oh great|oh joy|yeah right|yeah because|sure because|as if|"
    r"said no one|not!|I swear|totally not)\b|,?\s*(?:clearly|obviously)\s*[.!]?$",
    re.I,
)
_EMPHASIS_CAPS = re.compile(r"\b(?:LOVE|LOVED|ADORE|SUCH|SO|TOTALLY|REALLY|GREAT|BEST|FAVORITE)\b")
_JOKE = re.compile(r"\b(?:lol|lmao|haha+|jk|rofl)\b", re.I)
_HYPERBOLE = re.compile(r"\b(?:basically|officially|certified|at this point|world's)\b", re.I)
_THIRD_PARTY = re.compile(
    r"\b(?:they|people|everyone|everybody|someone|he|she|my \w+|coworkers|friends)\s+"
    r"(?:keep |always |all )?(?:say|says|saying|said|think|thinks|call|calls|told me)\b|"
    r"\bapparently\b|\bI heard\b",
    re.I,
)
_EMOTION = re.compile(
    r"^I(?:'m| am| feel| felt)\s+(?:so |really |super |very |honestly |just |a bit |kind of )*"
    r"(?P<word>\w+)",
    re.I,
)


def clause_markers(clause: Clause) -> frozenset[str]:
    """Every exclusion marker that applies to the clause."""
    text = clause.text
    found = set()
    if _HYPOTHETICAL.search(text):
        found.add(HYPOTHETICAL)
    if _HEDGE.search(RELEVANCE_ASIDE.sub(" ", text)):
        found.add(HEDGED)
    plan = _PLAN.search(text)
    if plan and not (plan.group("season") and _PAST_VERB.search(text)):
        found.add(PLAN)
    if _TIME_BOUND.search(text) or (
        _SHORT_SPAN.search(text) and not re.search(r"\bbeen\b", text, re.I)
    ):
        found.add(TIME_BOUND)
    if clause.is_question:
        found.add(QUESTION)
    if is_sarcastic(text):
        found.add(SARCASM)
    if _THIRD_PARTY.search(text):
        found.add(THIRD_PARTY_OPINION)
    if re.match(r"^(?:ugh+|argh+|urgh+|ffs|man,|god,)\b", text, re.I):
        found.add(VENTING)
    return frozenset(found)


# A clause that is only a span of time ("for the next little while", "until the cast comes
# off"): what follows it in the sentence holds for that span.
_TIME_PHRASE = re.compile(
    r"^(?:for the (?:next|rest of)|until|till|through|during|this|these|from now)\b"
    r"(?!.*\b(?:I|I'm|I've|we|we're)\b)",
    re.I,
)
# Words that introduce what follows from the clause before ("…for the next week so no
# alcohol").
_CONSEQUENCE = frozenset({"so", "therefore", "hence", "which means"})


def turn_markers(clauses: Sequence[Clause]) -> list[frozenset[str]]:
    """Each clause's markers; a time bound also covers, in its sentence, the consequence the
    bounded clause leads to ("on antibiotics for the next week so no alcohol") and what a
    clause that is only a span of time opens ("for the next little while, I'm typing
    one-handed"). A grand label said in jest makes the rest of its sentence the joke's
    evidence ("I'm basically fluent in French now, I can say croissant"), and a clause that
    only opens a hypothetical makes the rest of its sentence hypothetical."""
    markers = [clause_markers(clause) for clause in clauses]
    for position in _said_in_irony(clauses):
        markers[position] = markers[position] | {SARCASM}
    in_jest = framed = False
    for position in range(1, len(clauses)):
        before, clause = clauses[position - 1], clauses[position]
        if before.sentence != clause.sentence:
            in_jest = framed = False
            continue
        # "Suppose, just hypothetically, I was allergic to latex…": a clause that only opens a
        # hypothetical frames the rest of its sentence.
        framed = framed or bool(_HYPOTHETICAL_FRAME.fullmatch(before.text.strip(" ,.!:-")))
        if framed:
            markers[position] = markers[position] | {HYPOTHETICAL}
        in_jest = (
            in_jest
            or bool(_GRAND_SELF_LABEL.search(before.text))
            or (
                bool(_SARCASTIC_OPENER.fullmatch(before.text.strip(" ,.!")))
                # "oh sure, I'm totally a gym rat lol": the laugh says it is mocked too.
                and bool(_ENTHUSIASM.search(clause.text) or _JOKE.search(clause.text))
                # "oh yeah, and I love jazz" adds something remembered.
                and clause.connector.lower() not in ("and", "also", "plus")
            )
        )
        if in_jest:
            markers[position] = markers[position] | {SARCASM}
        if TIME_BOUND in markers[position - 1] and (
            clause.connector.lower() in _CONSEQUENCE or _TIME_PHRASE.match(before.text)
        ):
            markers[position] = markers[position] | {TIME_BOUND}
        if _SAYS_AFTER.fullmatch(clause.text.strip(" ,.!")) and not _SAID_OF_ME.match(before.text):
            # "vegan twenty years, he says": what came before is someone else's word ("I'm
            # allergic to shellfish, my doctor says" is the user's own, vouched for).
            markers[position - 1] = markers[position - 1] | {THIRD_PARTY_OPINION}
    return markers


_SAID_OF_ME = re.compile(r"^(?:I|I'm|I've|I'd|my|me|we|we're|our)\b", re.I)
_SAYS_AFTER = re.compile(
    r"(?:or\s+so\s+)?(?:he|she|they|my \w+)\s+(?:says|said|claims|claimed|reckons|swears)", re.I
)


_HYPOTHETICAL_FRAME = re.compile(
    r"(?:(?:just|purely|but|and|so|ok|okay|well|now)\s+)*(?:suppose|supposing|say|let's say|lets say|"
    r"imagine|what if|hypothetically|hypothetically speaking|in theory|theoretically|"
    r"for argument's sake|for the sake of argument)",
    re.I,
)
# A tag said after a claim, alone ("Love Mondays. Truly.", "Allergic to Mondays, clearly.",
# "Love my commute. Said no one."):
# it vouches for what no one doubted, which is how irony is marked in speech.
_IRONIC_TAG = re.compile(
    r"(?:truly|clearly|obviously|naturally|said no\s*(?:one|body)(?:\s+ever)?)", re.I
)
# "Of course I love when the train is late…", "Yes of course, I am a millionaire…": a turn
# that opens by granting what nobody asked mocks the claim in its sentence. Not "Of course!
# I'm vegan", where the agreement is a sentence of its own.
_GRANTING_OPENER = re.compile(r"^(?:(?:yes|yeah|oh|well|but)[\s,]+)*of course\b", re.I)


def _said_in_irony(clauses: Sequence[Clause]) -> set[int]:
    """The positions of the clauses an ironic tag or a granting opener marks as a joke."""
    marked: set[int] = set()
    for position, clause in enumerate(clauses):
        if position > 0 and _IRONIC_TAG.fullmatch(clause.text.strip(" ,.!")):
            sentence = clauses[position - 1].sentence
            marked |= {
                earlier for earlier in range(position) if clauses[earlier].sentence == sentence
            }
    # "I'm definitely a morning person, that's why I hit snooze six times", "sure, and I'm
    # also an astronaut": the claim and, in its sentence, what gives it the lie.
    for position, clause in enumerate(clauses):
        lie = _GIVES_THE_LIE.search(clause.text)
        if lie is None:
            continue
        sentence = clause.sentence
        claimed = lie.group("absurd") or _BOLD_CLAIM.search(clause.text[: lie.start()])
        claimed = claimed or any(
            clauses[earlier].sentence == sentence and _BOLD_CLAIM.search(clauses[earlier].text)
            for earlier in range(position)
        )
        if claimed:
            marked |= _of_sentence(clauses, sentence)
    if clauses and _GRANTING_OPENER.match(clauses[0].text):
        marked |= _of_sentence(clauses, clauses[0].sentence)
    # "...nothing beats two hours in traffic. Love that for me.": a mocking tag says its own
    # sentence and the one before it are the joke.
    for clause in clauses:
        if _MOCKING_TAG.search(clause.text):
            marked |= _of_sentence(clauses, clause.sentence)
            marked |= _of_sentence(clauses, clause.sentence - 1)
    return marked


_MOCKING_TAG = re.compile(
    r"\b(?:love that for me|living the dream|just what I needed|exactly what I needed|"
    r"(?:the|truly the|real)\s+highlight of my (?:day|week|month|year|life))\b",
    re.I,
)


def _of_sentence(clauses: Sequence[Clause], sentence: int) -> set[int]:
    """The positions of every clause of one sentence."""
    return {position for position, clause in enumerate(clauses) if clause.sentence == sentence}


# A claim about oneself said boldly ("I'm totally a morning person", "I'm a huge fan of
# paying rent")...
_BOLD_CLAIM = re.compile(
    r"\bI(?:'m| am)\s+(?:totally|definitely|famously|a huge fan|a real|a world-class|world-class)\b",
    re.I,
)
# ...and what follows it in its sentence to give it the lie, or an escalation no one means.
_GIVES_THE_LIE = re.compile(
    r"\b(?:(?:that's|that is|which is|that's exactly)\s+why\s+I\b|"
    r"said\s+no\s*(?:one|body)\b|"
    r"(?P<absurd>I(?:'m| am)\s+also\s+(?:a|an)\s+"
    r"(?:astronaut|millionaire|billionaire|supermodel|rocket scientist|olympian|brain surgeon|"
    r"ballerina|pop star|movie star|the queen|the king|unicorn)\b))",
    re.I,
)
# "my favourite thing in the world not": praise taken back by a bare "not" at its end.
_TRAILING_NOT = re.compile(r"(?<!\bor)(?<!\bif)\s+not\s*[.!]*$", re.I)


# Ordeals nobody likes ("being put on hold", "two hours in traffic", "paying rent"): praised,
# they are mocked.
_ORDEAL = re.compile(
    r"\b(?:(?:being\s+)?(?:put\s+)?on\s+hold|hold music|traffic(?:\s+jams?)?|rush hour|"
    r"queu(?:e|es|ing|eing)|waiting in (?:line|queues?)|paying (?:rent|taxes|(?:the\s+)?bills)|"
    r"(?:doing\s+)?(?:my\s+)?taxes|tax returns?|jury duty|root canals?|hangovers?|"
    r"(?:being|getting)\s+stuck|delayed (?:trains?|flights?|buses)|lost luggage|spam calls|"
    r"cold calls|roadworks|mosquito(?:es|s)?(?!\s+(?:nets?|repellent|spray))|(?:a\s+)?flat tyres?|"
    r"(?:a\s+)?flat tires?)\b",
    re.I,
)
_PRAISE_OF = re.compile(
    r"\b(?:love|loving|adore|enjoy|fan of|nothing beats|can't get enough of|live for|"
    r"favou?rite|highlight of|best part of|the best)\b",
    re.I,
)


_SPARED = frozenset("no without avoid avoiding skip skipping beat beating hate".split())


def _endured(text: str, ordeal: re.Match[str]) -> bool:
    """The ordeal is had, not spared ("no security queues", "without the traffic")."""
    return not _SPARED.intersection(w.lower() for w in text[: ordeal.start()].split()[-3:])


def is_sarcastic(text: str) -> bool:
    """Sarcasm cue phrases, ironic all-caps emphasis, praise of an ordeal, or a laughing
    hyperbolic self-label."""
    if _SARCASM_CUE.search(text) or _EMPHASIS_CAPS.search(text):
        return True
    if _PRAISE_OF.search(text) and any(_endured(text, m) for m in _ORDEAL.finditer(text)):
        return True
    if _TRAILING_NOT.search(text) and _ENTHUSIASM.search(text):
        return True
    return bool(_JOKE.search(text) and _HYPERBOLE.search(text)) or bool(
        _GRAND_SELF_LABEL.search(text)
    )


# "Oh yeah, I just adore doing taxes": an opener said alone sets the tone of its sentence.
_SARCASTIC_OPENER = re.compile(
    r"(?:oh\s+)?(?:yeah\s+right|sure\s+thing)|oh\s+(?:yeah|sure|great|joy|wonderful|fantastic|"
    r"brilliant|lovely)|(?:oh|ah)\s+yes",
    re.I,
)
# What the opener mocks: "oh yeah, I'm vegan by the way" is a sincere aside.
_ENTHUSIASM = re.compile(
    r"\b(?:love|loving|adore|enjoy|can't wait|so much fun|the best|best \w+ (?:of|in)|favou?rite|"
    r"thrilled|delighted|fan of)\b",
    re.I,
)
# "I'm basically a gourmet chef now", "clearly I'm a world-class chef", "basically fluent in
# French": a grand label hedged by "basically" or "clearly" is said in jest.
_GRAND_SELF_LABEL = re.compile(
    # "clearly I'm a gifted cook", "because obviously I'm the weather's favourite person".
    r"^(?:(?:because|cause|and|so)\s+)?(?:clearly|obviously)\s+I(?:'m| am)\b|"
    r"\b(?:basically|clearly|practically|officially|literally)\s+(?:I'm\s+|I am\s+)?"
    r"(?:a\s+|an\s+)?"
    r"(?:professional|gourmet|world-class|world class|expert|genius|pro|master|native|fluent|"
    r"millionaire|billionaire|superhero|olympian|celebrity|legend|saint)\b",
    re.I,
)


def is_emotion(text: str) -> bool:
    """True for "I'm (so) <emotion>" clauses. Being afraid or scared *of* something is a fear
    the user lives with ("I'm afraid of flying"), not a passing feeling."""
    match = _EMOTION.match(text)
    if not match or match.group("word").lower() not in EMOTION_WORDS:
        return False
    return not (
        match.group("word").lower() in ("afraid", "scared")
        and re.match(r"\s+of\b", text[match.end() :], re.I)
    )
