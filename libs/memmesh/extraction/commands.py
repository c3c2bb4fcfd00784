"""Memory-control commands and correction pairs (seed 001 §2.11.11, §2.21-2.22, Q13)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from .model import Command, Correction
from .text import normalize, split_clauses

_TOPIC = r"(?P<target>[^,.!?;]+?)"
_END = r"(?=\s*(?:[,.!?;]|$|\s+(?:and|but|because|so|please|thanks|I)\b))"
_IMPERATIVE = (
    r"(?:^|[,.!?;]\s*|\b(?:please|kindly|can you|could you|would you|will you|just|actually|"
    r"now|and|also|so|then|ok|okay|I want you to|I need you to|I'd like you to|you can|"
    r"you should|go ahead and|feel free to|I'd appreciate it if you'd|I'd appreciate it if you)\s+)"
)
# Words that erase (a forget is said many ways).
_ERASE = (
    r"(?:forget|delete|erase|remove|wipe|scrub|purge|clear|drop|discard|trash|destroy|get rid of)"
)
# What a memory of the user is called.
_HOLDINGS = (
    r"(?:everything|all|anything|all (?:of )?(?:the )?(?:stuff|things|data|info|information|memories|"
    r"details|facts))"
)
_YOU_KEEP = (
    r"(?:(?:you(?:'ve| have)?\s+(?:ever\s+|got\s+)?(?:know|have|remember(?:ed)?|stored|saved|kept|"
    r"learned|learnt|collected|gathered|recorded|got|picked up)(?:\s+(?:stored|saved|on file))?|"
    r"I(?:'ve| have)?\s+(?:ever\s+)?(?:told you|said|shared|mentioned))\s+)"
)
# What the user said in this conversation (as opposed to one topic).
_IN_THIS_TALK = (
    r"(?:today|so far|just now|earlier|in this (?:conversation|chat|session|call|talk)|here|"
    r"this (?:morning|afternoon|evening|session))"
)

# Ordered: forgetting everything before a thread, thread commands before generic forget/store,
# global recall mode before pull-only.
_COMMAND_PATTERNS: tuple[tuple[Command, str], ...] = (
    (
        Command.FORGET_EVERYTHING,
        rf"\b{_ERASE}\s+(?:absolutely\s+|literally\s+)?{_HOLDINGS}\s+(?:that\s+)?{_YOU_KEEP}?"
        r"(?:about|on|of)\s+me\b",
    ),
    (
        Command.FORGET_EVERYTHING,
        r"\bforget\s+(?:about\s+)?(?:me|who I am|(?:that\s+)?I (?:ever\s+)?exist(?:ed)?)"
        r"(?:\s+(?:entirely|completely|altogether|for good|forever))?\s*(?:[,.!?;]|$|\s+please\b)",
    ),
    (
        Command.FORGET_EVERYTHING,
        rf"\b{_ERASE}\s+(?:all\s+(?:of\s+)?|everything\s+(?:in\s+)?)?my\s+(?:personal\s+)?(?:data|info|"
        r"information|profile|memories|records|details|file)\b(?!\s+(?:about|on|for|from)\b)",
    ),
    (
        Command.FORGET_EVERYTHING,
        r"\b(?:wipe|erase|clear|reset|delete|purge|empty|format)\s+(?:all\s+(?:of\s+)?)?your\s+"
        r"(?:entire\s+|whole\s+)?(?:memory|memories)(?:\s+(?:of|about)\s+me)?\b",
    ),
    (
        Command.FORGET_EVERYTHING,
        r"(?:^|[,.!?;]\s*|\b(?:please|just|and|so)\s+)(?:forget|erase|wipe|delete)\s+(?:absolutely\s+)?"
        r"(?:everything|it all|all of it)\s*(?:[.!]|$|,\s*(?:please|start|I want|from scratch)|"
        r"\s+(?:please|from scratch|and start over)\b)",
    ),
    (
        Command.FORGET_THREAD,
        r"\b(?:forget|wipe|delete|erase|clear|drop|scrap|trash|remove|scratch|discard|purge)\s+"
        r"(?:all\s+(?:of\s+)?)?(?:this|that|the|our|today's)\s+"
        r"(?:whole\s+|entire\s+|last\s+|current\s+)?(?:thread|conversation|chat|discussion|session|"
        r"call|talk|exchange)\b"
        rf"(?:\s+(?:about|on)\s+{_TOPIC}{_END})?",
    ),
    (
        Command.FORGET_THREAD,
        r"\b(?:pretend|act like|act as if)\s+(?:this|that|the|our)\s+(?:whole\s+|entire\s+)?"
        r"(?:conversation|chat|talk|session|call)\s+(?:never|didn't|did not)\s+happen",
    ),
    (
        Command.FORGET_THREAD,
        r"\b(?:this|that|our)\s+(?:whole\s+|entire\s+)?(?:conversation|chat|talk|session|call)\s+"
        r"(?:never happened|didn't happen|did not happen|is off the record|stays off the record)",
    ),
    (
        Command.FORGET_THREAD,
        rf"\b{_ERASE}\s+(?:everything|all|anything|what|all that|whatever)\s+(?:that\s+)?"
        r"(?:we(?:'ve| have)?\s+(?:just\s+)?(?:talked about|discussed|said|covered|chatted about|"
        r"spoke about|went over)|I(?:'ve| have)?\s+(?:just\s+)?(?:said|told you|mentioned|shared)"
        rf"(?:\s+to\s+you)?\s+{_IN_THIS_TALK})",
    ),
    (
        Command.RESUME_THREAD,
        rf"\b(?:resume|continue|reopen|go back to|get back to)\s+(?:the|our|that)\s+"
        rf"(?:thread|conversation|chat|discussion)\s+(?:about|on)\s+{_TOPIC}{_END}",
    ),
    (
        Command.RESUME_THREAD,
        rf"\b(?:resume|continue|reopen|pick\s+(?:back\s+)?up(?:\s+on)?|go back to|get back to)\s+"
        rf"(?:the|our|that)\s+{_TOPIC}\s+(?:thread|conversation|chat|discussion)\b",
    ),
    (
        Command.RESUME_THREAD,
        rf"\bpick\s+(?:back\s+)?up\s+(?:where we left off\s+)?(?:on|with)\s+(?:the|our)?\s*{_TOPIC}"
        rf"{_END}",
    ),
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\b(?:don't|do not|never)\s+(?:auto-?resume|resume\b[^,.!?]*\bautomatically)",
    ),
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\bonly\s+(?:resume|recall|bring (?:stuff|things) up)\s+(?:stuff\s+|things\s+|anything\s+)?"
        r"(?:if|when)\s+I\s+ask",
    ),
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\b(?:don't|do not|never)\s+(?:bring up|mention|resurface|surface|pull up)\s+"
        r"(?:old|past|previous|earlier)\s+(?:stuff|things|conversations|memories|topics)",
    ),
    (
        Command.RECALL_ONLY_IF_ASKED,
        r"\b(?:don't|do not|never)\s+(?:bring|pull)\s+(?:anything|stuff|things)\s+up\s+unless",
    ),
    (
        Command.PULL_ONLY,
        r"\bonly\s+(?:recall|bring up|mention|remind me (?:of|about)|surface|use|raise)\s+"
        r"(?:this|that|it|those|these)\b[^.!?]*\b(?:if|when)\s+I\s+ask",
    ),
    (
        Command.PULL_ONLY,
        r"\bonly\s+(?:bring|pull)\s+(?:this|that|it|those|these)\s+up\s+(?:if|when)\s+I\s+ask",
    ),
    (
        Command.PULL_ONLY,
        r"\bonly\s+(?:bring up|mention|talk about|recall|raise)\s+(?P<target>(?:my|the|our)\s+"
        r"[^,.!?;]+?)\s+(?:if|when)\s+I\s+(?:ask|bring it up)",
    ),
    (
        Command.PULL_ONLY,
        r"\b(?:don't|do not|never)\s+(?:bring up|mention|raise|talk about)\s+(?P<target>(?:my|the|our)"
        r"\s+[^,.!?;]+?)\s+unless\s+I\s+(?:ask|bring it up)",
    ),
    (
        Command.PULL_ONLY,
        r"\b(?:don't|do not|never)\s+(?:bring|mention|raise)\s+(?:this|that|it)\s+(?:up\s+)?"
        r"unless\s+I\s+ask",
    ),
    (
        Command.DO_NOT_MENTION,
        rf"\b(?:stop|quit)\s+(?:mentioning|bringing up|talking about|reminding me (?:about|of)|"
        rf"asking (?:me )?about|nagging me about)\s*{_TOPIC}?{_END}",
    ),
    (Command.DO_NOT_MENTION, r"\b(?:stop|quit)\s+bringing\s+(?P<target>[^,.!?]+?)\s+up\b"),
    (
        Command.DO_NOT_MENTION,
        rf"\b(?:don't|do not|never)\s+(?:mention|bring up)\s+{_TOPIC}\s+(?:again|anymore|ever again)\b",
    ),
    (
        Command.DO_NOT_MENTION,
        r"\bI(?:'d| would)\s+(?:prefer|rather)\s+(?:if\s+)?you\s+(?:didn't|did not|not|don't|never)\s+"
        rf"(?:bring|mention|raise)\s*(?:up\s+)?{_TOPIC}?(?:\s+up)?(?:\s+again|\s+anymore)?{_END}",
    ),
    (
        Command.REMEMBER_EVERYTHING,
        r"(?<!do you )(?<!did you )(?<!don't )(?<!do not )(?<!never )\b(?:remember|save|store|"
        r"keep track of|keep|log|record)\s+(?:absolutely\s+)?(?:everything|all of it|it all)\b",
    ),
    (
        Command.DO_NOT_STORE,
        r"\b(?:don't|do not|never|please don't|you shouldn't|you should not)\s+(?:ever\s+)?"
        r"(?:remember|save|store|record|log|keep|write down|note down|note|memorize|memorise|hold on to|"
        r"hang on to|file away|retain)\s+(?:this|that|it|any of this|any of that|any of it|anything|"
        r"what I'm (?:about to say|saying|going to say|gonna say)|the next (?:bit|part|thing))\b"
        r"(?!\s+(?:is|was)\b)",
    ),
    (
        Command.DO_NOT_STORE,
        r"\b(?:don't|do not|never)\s+(?:keep|make|take|write)\s+(?:a\s+|any\s+)?(?:record|note|notes|"
        r"log|copy|memory)\s+of\s+(?:this|that|it|what I say)\b",
    ),
    (
        Command.DO_NOT_STORE,
        r"\b(?:no need to|you (?:don't|do not) (?:need|have) to|there's no need to)\s+(?:remember|save|"
        r"store|record|keep|log|note)\s+(?:this|that|it)\b",
    ),
    (Command.DO_NOT_STORE, r"\boff[ -](?:the\s+)?record\b"),
    (
        Command.DO_NOT_STORE,
        r"\b(?:this|that|it) (?:stays|is|remains|has to stay|needs to stay|should stay) "
        r"(?:just |strictly )?between (?:us|you and me|ourselves|the two of us)\b",
    ),
    (
        Command.DO_NOT_STORE,
        r"\bkeep (?:this|that|it) (?:just |strictly )?(?:between (?:us|you and me|ourselves|the two of us)|"
        r"to yourself|private|confidential)\b",
    ),
    (
        Command.DO_NOT_STORE,
        r"\b(?:just|strictly|only)\s+between\s+(?:you and me|us|the two of us|ourselves)\b",
    ),
    (
        Command.DO_NOT_STORE,
        r"(?:^|[.!?;]\s*)between (?:you and me|us|the two of us|ourselves)\s*[,:]",
    ),
    (
        Command.DO_NOT_STORE,
        r"\bI (?:don't|do not) want (?:this|that|it|any of this|any of that) (?:to be )?(?:saved|stored|"
        r"remembered|kept|on record|recorded|written down|in your memory|logged)\b",
    ),
    (
        Command.DO_NOT_STORE,
        r"\bI(?:'d| would)\s+(?:prefer|rather)\s+(?:if\s+)?you\s+(?:didn't|did not|don't|not)\s+"
        r"(?:remember|save|store|record|keep|log)\s+(?:this|that|it)\b",
    ),
    (
        Command.FORGET,
        rf"{_IMPERATIVE}{_ERASE}\s+(?:what|everything|anything|all|whatever|the stuff|the things?)\s+"
        r"(?:that\s+)?I(?:'ve| have)?\s+(?:ever\s+|just\s+)?(?:told|said|mentioned|shared|said to)"
        rf"(?:\s+you)?(?:\s+(?:earlier|before))?(?:\s+(?:about|regarding|on)\s+{_TOPIC}{_END})?",
    ),
    (
        Command.FORGET,
        rf"\b(?:never mind|nevermind|disregard|ignore)\s+(?:what|everything|anything)\s+I\s+"
        rf"(?:told you|said|mentioned)\s+(?:about|regarding)\s+{_TOPIC}{_END}",
    ),
    (
        Command.FORGET,
        rf"{_IMPERATIVE}forget\s+(?:that\s+)?I\s+(?:ever\s+)?(?:said|mentioned|told you)"
        rf"(?:\s+(?:anything\s+)?about\s+{_TOPIC}{_END})?",
    ),
    (
        Command.FORGET,
        rf"{_IMPERATIVE}(?:forget|delete|erase|remove|wipe|scrub)\s+(?:that|the fact that)\s+"
        rf"(?P<target>(?:my|I|I'm|I've|I'd|I'll|our)\b[^,.!?;]+?){_END}",
    ),
    (
        Command.FORGET,
        rf"{_IMPERATIVE}{_ERASE}\s+(?:my|our)\s+{_TOPIC}\s+from\s+(?:your\s+)?(?:memory|memories|"
        rf"records|notes|files|database|system){_END}",
    ),
    (
        Command.FORGET,
        r"(?:^|[,.!?;]\s*|\b(?:please|just|ok|okay|oh)\s+)(?:scratch|strike)\s+that"
        r"(?:\s+from\s+(?:your\s+)?(?:memory|memories|the record|your notes)|\s*(?:[.!]|$))",
    ),
    (
        Command.FORGET,
        rf"{_IMPERATIVE}(?:forget|delete|erase|remove|wipe|scrub)\s+(?:that|this|the)\s+"
        r"(?:memory|fact|bit|part|one)\b",
    ),
    (
        Command.FORGET,
        rf"{_IMPERATIVE}(?:forget|delete|erase|scrub)\s+(?:that|this)\b(?!\s+(?:thread|conversation))",
    ),
    (Command.FORGET, rf"{_IMPERATIVE}forget\s+(?:about\s+)?my\s+{_TOPIC}{_END}"),
    # "Forget the stuff about my aunt", "delete everything about her" (a pronoun points at
    # what was just said about someone).
    (
        Command.FORGET,
        rf"{_IMPERATIVE}{_ERASE}\s+(?:the\s+(?:thing|stuff|bit|part|fact|info|details?)s?\s+|"
        rf"everything\s+|anything\s+|all\s+|what you know\s+)?about\s+(?!(?:it|that|this)\b)"
        rf"(?:my\s+)?{_TOPIC}{_END}",
    ),
    # "Delete my aunt's info", "erase my cousin's address".
    (
        Command.FORGET,
        rf"{_IMPERATIVE}{_ERASE}\s+my\s+(?P<target>[^,.!?;]+?'s\s+[^,.!?;]+?){_END}",
    ),
    # "Delete it.", "erase those" (what was just said).
    (
        Command.FORGET,
        rf"{_IMPERATIVE}{_ERASE}\s+(?:it|those|these|them)\s*(?:[.!]|$|,?\s*please\b)",
    ),
    (
        Command.RECALL_SUMMARY,
        r"\bwhat\s+(?:do|did)\s+you\s+(?:remember|know|recall)\s+about\s+me\b",
    ),
    (
        Command.RECALL_SUMMARY,
        r"\bwhat\s+(?:have\s+you\s+|do\s+you\s+)?(?:got\s+|have\s+)?(?:saved|stored|remembered|"
        r"recorded|kept)\s+(?:on|about)\s+me\b",
    ),
    (Command.RECALL_SUMMARY, r"\bwhat\s+(?:have|do)\s+you\s+(?:got|have)\s+(?:on|about)\s+me\b"),
    (Command.RECALL_SUMMARY, r"\bwhat(?:'s| is)\s+in\s+(?:your\s+)?memory\s+(?:about|on)\s+me\b"),
    (
        Command.RECALL_SUMMARY,
        r"\b(?:tell|show)\s+me\s+(?:what|everything)\s+you\s+(?:remember|know|have)\s+(?:about|on)\s+me",
    ),
)
_COMPILED = tuple((command, re.compile(pattern, re.I)) for command, pattern in _COMMAND_PATTERNS)

_TARGET_ABOUT = re.compile(
    r"\b(?:the stuff|the thing|everything|what I said)\s+about\s+"
    rf"(?:my\s+)?{_TOPIC}{_END}",
    re.I,
)
_DEICTIC = frozenset({"this", "that", "it", "those", "these", "me", ""})
_TARGET_TRIM = re.compile(r"^(?:about\s+)?(?:my|the|our|that|this)\s+|\s+(?:thing|stuff)$", re.I)


@dataclass(frozen=True)
class CommandMatch:
    """A detected command, the topic it names, and the correction pair if any."""

    command: Command | None
    target: str | None
    correction: Correction | None
    fact_text: str


def detect_command(text: str) -> CommandMatch:
    """Find the first memory-control command of a normalised turn, or a correction."""
    correction, fact_text = detect_correction(text)
    if correction is not None:
        return CommandMatch(Command.CORRECTION, correction.meant, correction, fact_text)
    for command, pattern in _COMPILED:
        match = pattern.search(text)
        if match:
            return CommandMatch(command, _target(command, match, text), None, text)
    return CommandMatch(None, None, None, text)


def carries_own_content(text: str) -> bool:
    """True when a turn says something besides its command ("off the record, my cousin is in
    rehab"): a command like DO_NOT_STORE then covers this turn, not what was said before."""
    clauses = split_clauses(normalize(text))
    return any(
        not is_command_clause(c.text) and len(re.findall(r"[A-Za-z']+", c.text)) >= 3
        for c in clauses
    )


def is_command_clause(clause_text: str) -> bool:
    """True when the clause itself carries a command (so it is not mined for facts)."""
    return any(pattern.search(clause_text) for _, pattern in _COMPILED)


def _target(command: Command, match: re.Match[str], text: str) -> str | None:
    if command is Command.FORGET_EVERYTHING:
        return None  # everything of the user: no topic
    target = match.groupdict().get("target")
    if not target or target.strip().lower() in _DEICTIC:
        about = _TARGET_ABOUT.search(text)
        target = about.group("target") if about else None
    if not target:
        return None
    for _ in range(2):
        target = _TARGET_TRIM.sub("", target.strip())
    target = target.strip(" ,.")
    return target or None


_CORRECTION_TRIGGER = re.compile(
    r"^(?:no|nope|nah|wrong|correction|sorry)\b|\b(?:I said|I meant|I mean|misheard|mis-heard|"
    r"you heard|heard me wrong|not what I said|I didn't say|I did not say|spelled|spelt|"
    r"spell it)\b|^not\s+\w",
    re.I,
)
_X_NOT_Y = re.compile(r"(?P<meant>[^,.;!?]+?),?\s+not\s+(?P<heard>[^,.;!?]+)", re.I)
_NOT_Y_X = re.compile(r"(?:^|[.;!?]\s*)not\s+(?P<heard>[^,.;!?]+),\s*(?P<meant>[^,.;!?]+)", re.I)
_SPELLED = re.compile(r"\b(?:[A-Za-z]-){2,}[A-Za-z]\b")
_LEAD_IN = re.compile(
    r"^(?:(?:no|nope|nah|sorry|wrong)[ ,]+)*(?:you misheard(?: me)?[ ,]+)?(?:I said|I meant|"
    r"I mean|it's spelled|it's|it is|its|that's|that is|I'm|I am|I live in|"
    r"my \w+(?:'s| is)(?: name is)?)?\s*",
    re.I,
)
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.I)
_INTERJECTION = re.compile(r"^(?:(?:no|nope|nah|sorry|wrong|correction)\b[ ,!.]*)+", re.I)


def detect_correction(text: str) -> tuple[Correction | None, str]:
    """Return the heard/meant pair of a correction and the turn with the misheard part removed."""
    if not _CORRECTION_TRIGGER.search(text):
        return None, text
    cleaned = _SPELLED.sub("", text)
    cleaned = re.sub(r",\s*,", ",", cleaned)
    leading = _NOT_Y_X.search(cleaned)
    if leading and _is_short_pair(leading.group("heard"), leading.group("meant")):
        heard, meant = leading.group("heard"), leading.group("meant")
        fact_text = cleaned.replace(leading.group(0), " ", 1)
    else:
        match = _X_NOT_Y.search(cleaned)
        if not match:
            return None, text
        heard, meant = match.group("heard"), match.group("meant")
        fact_text = cleaned[: match.start("meant")] + meant + cleaned[match.end("heard") :]
    fact_text = _INTERJECTION.sub("", fact_text.strip())
    heard_span = _ARTICLE.sub("", heard.strip())
    meant_span = _closest_span(_ARTICLE.sub("", _LEAD_IN.sub("", meant.strip())), heard_span)
    if not heard_span or not meant_span or heard_span.lower() == meant_span.lower():
        return None, text
    return Correction(heard=heard_span, meant=meant_span), fact_text


def _is_short_pair(heard: str, meant: str) -> bool:
    """ "not Y, X" is a correction only for short spans; longer ones are ordinary negation."""
    return (
        len(heard.split()) <= 3
        and len(meant.split()) <= 3
        and not _NOT_A_CORRECTION_START.match(meant.strip())
    )


_NOT_A_CORRECTION_START = re.compile(
    r"^(?:never|always|have|has|had|I|it|that|but|just|so|like|really|way|not|or|and)\b", re.I
)


def _closest_span(meant: str, heard: str) -> str:
    """The shortest span of `meant` aligned with `heard` (\"fifteen minutes\" vs \"fifty\")."""
    words, size = meant.split(), len(heard.split())
    if len(words) <= size or all(w[:1].isupper() for w in words):
        return meant.strip()
    best, best_score = "", -1.0
    for start in range(len(words) - size + 1):
        window = " ".join(words[start : start + size])
        score = difflib.SequenceMatcher(None, window.lower(), heard.lower()).ratio()
        if score > best_score:
            best, best_score = window, score
    return best
