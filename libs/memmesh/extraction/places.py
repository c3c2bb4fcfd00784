"""Identity facts about place and language: residence, origin, birthplace, native language."""

from __future__ import annotations

import re

from .context import SELF_STATEMENT_MARKERS, ClauseContext, appositive, build, last_place
from .lexicon import LANGUAGES, NON_PLACE_CAPITALS, NOT_A_NAME
from .markers import QUESTION, TIME_BOUND
from .model import Candidate
from .phrases import clean_object
from .text import slug

_LIVE_IN = re.compile(
    r"^(?:I|we)(?:'ve|\s+have)?\s+(?:currently\s+|now\s+|still\s+|always\s+)?(?:live|lived|"
    r"reside|am based|'m based|'re based)\s+"
    r"(?P<rest>.+)$|^(?:I'm|I am)\s+(?:based|living)\s+(?P<rest2>(?:in|out of)\s+.+)$",
    re.I,
)
# "I moved to Lyon", "we relocated to Tucson", terse "just moved to Nairobi", "moved into the
# new place in Denver": the move is episodic, where the user now lives is durable.
_MOVED_TO = re.compile(
    r"^(?:(?:I|we)(?:'ve|\s+have)?\s+)?(?:just\s+|recently\s+|finally\s+|also\s+)?"
    r"(?:moved|relocated|emigrated)\s+(?:back\s+|over\s+|out\s+|up\s+|down\s+|across\s+)?(?:to|into\s+(?:a|the|our|my)\s+"
    r"(?:new\s+)?(?:place|flat|apartment|house|home|condo)\s+in)\s+"
    r"(?P<place>[A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)*)",
    re.I,
)
# "been in Manchester ten years now", "I've been in Houston for six years": years in a place
# (named, so "been in hospital for two months" is no home).
_BEEN_IN = re.compile(
    r"^(?:(?:and|but|so)\s+)?(?:(?:I|we)(?:'ve|\s+have)\s+)?been\s+(?:living\s+)?in\s+"
    r"(?P<place>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)\s+(?:for\s+)?(?:(?:about|almost|nearly|over|"
    r"like)\s+)?(?P<dur>(?:\w+|\d+)\s+(?:years?|decades?))(?:\s+now)?[.!]*$"
)
_LIVED_HERE = re.compile(
    r"^I(?:'ve| have)\s+lived\s+(?:here|there)\s+(?:for\s+)?(?P<dur>.+)$", re.I
)
# Where the user lives, named in an earlier clause of the turn.
_LIVE_THERE = re.compile(
    r"^(?:(?:I|we)\s+(?:still\s+|now\s+|actually\s+)?live\s+(?:there|here)|"
    r"(?:I|we)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+)?moved\s+(?:there|here)|"
    r"(?:that's|that is|it's|it is)\s+where\s+(?:I|we)\s+(?:live|'m based|am based))"
    # "I moved here last year and still haven't explored much": when, and what came of it.
    r"(?:\s+(?:now|recently|last year|a while ago|\w+ (?:years?|months?) ago))?"
    r"(?:\s+and\s+(?!I\b|we\b).*)?[.!]*$",
    re.I,
)
# "My family's from Hong Kong", "my parents are from Kerala": where the user's people are from.
_FAMILY_FROM = re.compile(
    r"^(?:(?:and|but|so)\s+)?my\s+(?P<who>family|parents|folks|people)(?:'s|'re|\s+is|\s+are)\s+"
    r"(?:originally\s+|all\s+)?from\s+(?P<place>[A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)*)",
    re.I,
)
_FROM = re.compile(
    r"^(?:I'm|I am)\s+(?:originally\s+)?from\s+(?P<place>(?:the\s+)?[A-Za-z][\w'-]*"
    r"(?:\s+[A-Z][\w'-]*)*)|^(?:I\s+)?(?:grew up|was born(?: and raised)?|born and raised|born|"
    r"was raised|raised)\s+in\s+"
    r"(?P<place2>[A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)*)",
    re.I,
)
# "my hometown is Valparaíso", "Tbilisi is my birthplace": a place the user comes from.
_HOMETOWN = re.compile(
    r"^(?:(?:and|but|so)\s+)?(?:my\s+(?P<what>home\s*town|birthplace|place of birth)"
    r"(?:'s|\s+is|\s+was)\s+(?P<place>[\w'-]+(?:\s+[A-Z][\w'-]*)*)|"
    r"(?P<place2>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)\s+(?:is|was)\s+my\s+"
    r"(?P<what2>home\s*town|birthplace|place of birth))[.!]*$"
)
_HOME_FOR_ME = re.compile(
    r"^(?:that's|that is|it's|it is)\s+(?:where\s+I\s+grew\s+up|"
    r"(?:my\s+)?home\s+(?:for\s+me|town)|my hometown)$",
    re.I,
)
_LANGUAGE = re.compile(
    r"^my\s+(?P<kind>first|native|mother|home)\s+(?P<noun>language|tongue)\s+(?:is|'s)\s+"
    r"(?P<lang>\w+)|^(?P<lang2>\w+)\s+is\s+my\s+(?P<kind2>first|native|mother|home)\s+"
    r"(?P<noun2>language|tongue)|^(?:I'm|I am)\s+a\s+native\s+(?P<lang3>\w+)\s+speaker|"
    r"^I\s+(?:grew up\s+)?speak(?:ing)?\s+(?P<lang4>\w+(?:,?\s+(?:and\s+)?\w+)*?)\s+"
    r"(?:fluently|natively|at home)$",
    re.I,
)


# "Can you explain this in Portuguese? It is my mother language."
_PRONOUN_LANGUAGE = re.compile(
    r"^(?:it's|it is|that's|that is)\s+(?:my\s+)?(?P<kind>first|native|mother|home)\s+"
    r"(?P<noun>language|tongue)$|^(?:it's|it is|that's|that is)\s+my\s+"
    r"(?P<kind2>mother|native|first)\s+(?P<noun2>language|tongue)$",
    re.I,
)


def _language_named_before(ctx: ClauseContext) -> str | None:
    for clause in reversed(ctx.previous()[-3:]):
        named = [w for w in re.findall(r"[A-Za-z]+", clause.text) if w.lower() in LANGUAGES]
        if named:
            return str(named[-1]).capitalize()
    return None


def language_fact(ctx: ClauseContext, text: str) -> list[Candidate]:
    said_before = _PRONOUN_LANGUAGE.match(text)
    if said_before:
        language = _language_named_before(ctx)
        if not language:
            return []
        kind = (said_before.group("kind") or said_before.group("kind2")).lower()
        noun = (said_before.group("noun") or said_before.group("noun2")).lower()
        return [
            build(
                ctx,
                f"User's {kind} {noun} is {language}",
                "identity",
                f"identity.language.{slug(language)}",
                9000,
                SELF_STATEMENT_MARKERS - {QUESTION},
            )
        ]
    match = _LANGUAGE.match(text)
    if not match:
        return []
    language = next(
        g
        for g in (
            match.group("lang"),
            match.group("lang2"),
            match.group("lang3"),
            match.group("lang4"),
        )
        if g
    )
    spoken = [w for w in re.findall(r"\w+", language) if w.lower() != "and"]
    if not spoken or any(w.lower() not in LANGUAGES for w in spoken):
        return []
    kind = match.group("kind") or match.group("kind2")
    language = " and ".join(w.capitalize() for w in spoken)
    if kind:
        noun = (match.group("noun") or match.group("noun2")).lower()
        return [
            _identity(
                ctx, f"User's {kind.lower()} {noun} is {language}", "identity.language.native", 9200
            )
        ]
    if match.group("lang3"):
        return [
            _identity(ctx, f"User is a native {language} speaker", "identity.language.native", 9200)
        ]
    return [
        _identity(
            ctx,
            f"User speaks {language} {text.split()[-1].lower()}",
            f"identity.language.{slug(language)}",
            8800,
        )
    ]


# "Home's Rotterdam.", "home is Lisbon these days": where the user lives, named as home.
_HOME_IS = re.compile(
    # (The first word may be capitalised; the place's capital is what names it.)
    r"^(?:(?:[Aa]nd|[Bb]ut|[Ss]o)\s+)?[Hh]ome(?:'s|\s+is)\s+(?:now\s+)?"
    r"(?P<place>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)(?:\s+(?:now|these days|nowadays))?[.!]*$|"
    # "so Tacoma's home now".
    r"^(?:(?:[Aa]nd|[Bb]ut|[Ss]o)\s+)?(?:[Yy]eah\s+)?(?P<place2>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)(?:'s|\s+is)\s+"
    r"(?:my\s+|our\s+)?home\s+(?:now|these days|for good)[.!]*$"
)


_THATS_HOME = re.compile(
    r"^(?:(?:and|but|so|yeah)\s+)*(?:that's|that is|it's|it is|this is)\s+(?:my\s+|our\s+)?home"
    r"(?:\s+(?:now|for good|these days))?[.!]*$",
    re.I,
)


def residence_fact(ctx: ClauseContext, text: str) -> list[Candidate]:
    if _THATS_HOME.match(text) and (place := last_place(ctx.previous())):
        # "got the keys to the flat in Leith this morning, so that's home now".
        return [_identity(ctx.without(TIME_BOUND), f"User lives in {place}", "identity.residence")]
    home = _HOME_IS.match(text)
    if home and (place := _place(home.group("place") or home.group("place2"))):
        # "closed on the house today, so Tacoma's home now": the day is news, the home is not.
        return [_identity(ctx.without(TIME_BOUND), f"User lives in {place}", "identity.residence")]
    match = _MOVED_TO.match(text)
    if match:
        place = _place(match.group("place"))
        if not place:
            return []
        # The move itself is episodic; the durable part is where the user now lives.
        ctx = ctx.without(TIME_BOUND)
        return [_identity(ctx, f"User lives in {place}", "identity.residence")]
    been_in = _BEEN_IN.match(text)
    if been_in and (place := _place(been_in.group("place"))):
        years = clean_object(been_in.group("dur"))
        return [_identity(ctx, f"User has been in {place} for {years}", "identity.residence")]
    match = _LIVED_HERE.match(text)
    if match:
        place = last_place(ctx.previous())
        if place:
            return [
                _identity(
                    ctx,
                    f"User has lived in {place} for {clean_object(match.group('dur'))}",
                    "identity.residence",
                )
            ]
        return []
    if _LIVE_THERE.match(text):
        # "Weather in Cork? I live there." / "Rain in Leeds again? That's where I live."
        place = last_place(ctx.previous())
        if re.search(r"\bmoved\b", text, re.I):
            # "I moved here last year": the move is episodic, where they live is not.
            ctx = ctx.without(TIME_BOUND)
        return [_identity(ctx, f"User lives in {place}", "identity.residence")] if place else []
    match = _LIVE_IN.match(text)
    if not match:
        return []
    rest = match.group("rest") or match.group("rest2")
    places = [
        m.group(1)
        for m in re.finditer(r"\b(?:in|out of)\s+([A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)*)", rest)
    ]
    places = [p for p in (_place(p) for p in places) if p]
    if not places:
        return []
    appendix = appositive(ctx)
    duration = re.search(
        r"\b(?P<dur>for\s+(?:about\s+|over\s+|almost\s+)?\w+\s+(?:years?|"
        r"decades?)|since\s+(?:\d{4}|I was [\w ]+|childhood|college))",
        rest,
        re.I,
    )
    if re.search(r"\blived\b", text, re.I):
        if not duration:
            return []
        return [
            _identity(
                ctx, f"User has lived in {places[-1]} {duration.group('dur')}", "identity.residence"
            )
        ]
    return [_identity(ctx, f"User lives in {places[-1]}{appendix}", "identity.residence")]


def _place(raw: str) -> str | None:
    words = raw.split()
    if words and re.fullmatch(r"\d{4}", words[0]):
        return None
    if not words or words[0].lower() in (
        "a",
        "an",
        "the",
        "my",
        "our",
        "this",
        "that",
        "here",
        "there",
        "town",
        "the city",
    ):
        return None
    kept: list[str] = []
    for word in words:
        if word.lower() in NOT_A_NAME or (kept and not word[:1].isupper()):
            break
        kept.append(word)
    if not kept or kept[0].lower() in NON_PLACE_CAPITALS:
        return None
    return " ".join(kept)


def origin_fact(ctx: ClauseContext, text: str) -> list[Candidate]:
    match = _FROM.match(text)
    if match:
        raw = match.group("place") or match.group("place2")
        article = "the " if raw.lower().startswith("the ") else ""
        place = _place(raw[4:] if article else raw)
        if not place:
            return []
        verb = "is from" if match.group("place") else "grew up in"
        key = "identity.origin"
        if re.search(r"\bborn\b", text, re.I):
            verb = "was born and raised in" if "raised" in text.lower() else "was born in"
            key = "identity.origin" if "raised" in text.lower() else "identity.birthplace"
        elif re.search(r"\braised\b", text, re.I):
            verb = "was raised in"
        return [_identity(ctx, f"User {verb} {article}{place}", key)]
    match = _FAMILY_FROM.match(text)
    if match:
        place = _place(match.group("place"))
        who = match.group("who").lower()
        verb = "is" if who == "family" else "are"
        return (
            [_identity(ctx, f"User's {who} {verb} from {place}", "identity.heritage")]
            if place
            else []
        )
    hometown = _HOMETOWN.match(text)
    if hometown:
        place = _place(hometown.group("place") or hometown.group("place2"))
        what = (hometown.group("what") or hometown.group("what2")).lower()
        if not place:
            return []
        if what.startswith("home"):
            return [_identity(ctx, f"User's hometown is {place}", "identity.origin")]
        return [_identity(ctx, f"User was born in {place}", "identity.birthplace")]
    if _HOME_FOR_ME.match(text):
        place = last_place(ctx.previous())
        if place:
            return [_identity(ctx, f"User grew up in {place}", "identity.origin", 8800)]
    return []


def _identity(ctx: ClauseContext, text: str, key: str, confidence_bp: int = 9000) -> Candidate:
    return build(ctx, text, "identity", key, confidence_bp, SELF_STATEMENT_MARKERS)
