"""The one text toolkit of the mesh: word tokens, the Snowball stem, stop-word lists, sentences.

Pure and deterministic. Engines keep only what is theirs (the ranker's query expansion, the
ThreadStore's entities, the guard's phrase matching, the extractor's clause rules); the
primitives they share live here once. Each stop-word list is named for what it is for.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

import snowballstemmer

# The common English stop-word list (NLTK's): words left out of the lexical index, so BM25
# scores compare with standard setups.
INDEX_STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did
    doing a an the and but if or because as until while of at by for with about against
    between into through during before after above below to from up down in out on off over
    under again further then once here there when where why how all any both each few more
    most other some such no nor not only own same so than too very s t can will just don
    should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma mightn
    mustn needn shan shouldn wasn weren won wouldn
    """.split()
)

# Words that carry no content in conversation (function words, greetings, fillers, vague
# nouns): left out when a turn's topic, salient words or loops are worked out.
CONVERSATION_STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further get got had hadn't has hasn't have
    haven't having he he'd he'll he's her here here's hers herself him himself his how how's i i'd
    i'll i'm i've if in into is isn't it it's its itself just let's like me more most mustn't my
    myself need no nor not now of off oh ok okay on once only or other ought our ours ourselves out
    over own really same shan't she she'd she'll she's should shouldn't so some such than thanks
    that that's the their theirs them themselves then there there's these they they'd they'll
    they're they've this those through to too under until up us very was wasn't we we'd we'll we're
    we've well were weren't what what's when when's where where's which while who who's whom why
    why's will with won't would wouldn't yeah yes you you'd you'll you're you've your yours
    yourself yourselves hi hello hey sure maybe please thank going want wanna gonna lot lots thing
    things something anything really pretty quite still even much many one two""".split()
)

# Words left out of an atom key's slug ("my favorite tea" -> "favorite_tea"): keys must stay
# stable however the user phrases the same thing.
SLUG_STOP_WORDS = frozenset(
    "a an the my your their his her its of to for with in on at and or "
    "any anything all some really very just so i me when".split()
)

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
# Conversation words: ASCII words with inner apostrophes and hyphens, numbers with separators.
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.,:]\d+)*")
# Plain words: lowercase ASCII letters and digits (what keys, topics and sensitive terms are in).
_PLAIN_WORD = re.compile(r"[a-z0-9]+")
# Index words: runs of Unicode letters and digits of casefolded text, possessives dropped.
_INDEX_WORD = re.compile(r"[^\W_]+")
_POSSESSIVE = re.compile(r"['’]s\b")
# A name a speaker addresses someone by: after a comma or a greeting, before a punctuation
# mark ("Thanks, Mel!", "Hey Jon, look"). Sentence-initial words ("Wow, ...") are not taken.
_ADDRESS = re.compile(
    r"(?:, |\b(?:[Hh]ey|[Hh]i|[Hh]ello|[Tt]hanks|[Dd]ear) )([A-Z][a-z]+)(?=[!?.,])"
)
# Snowball stemmers keep state while they stem: one per thread.
_STEMMERS = threading.local()


def sentences(text: str) -> list[str]:
    """Sentences of a text (split after . ! ? ; and at line breaks), trimmed, empty ones dropped."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


def words(text: str) -> list[str]:
    """Word tokens of conversation text in order, case kept (typographic apostrophes made plain)."""
    return [w.replace("’", "'") for w in _WORD.findall(text)]


def addressed_names(text: str) -> list[str]:
    """The names a text addresses someone by ("Thanks, Mel!" -> Mel), in order, as written:
    who is talking to whom, not what is talked about."""
    return _ADDRESS.findall(text)


def index_words(text: str) -> list[str]:
    """Casefolded letter-and-digit runs of a text in order, possessive 's dropped (index terms)."""
    return _INDEX_WORD.findall(_POSSESSIVE.sub("", text.casefold()))


def plain_words(text: str) -> list[str]:
    """Lowercase ASCII letter-and-digit runs of a text in order ("identity.bank_pin" -> identity,
    bank, pin): the words keys, topics and sensitive terms are compared in."""
    return _PLAIN_WORD.findall(text.lower())


@lru_cache(maxsize=1 << 17)
def stem(word: str) -> str:
    """The Snowball English stem of a word as given (callers lower-case it first).

    A pure function of the word: the cache only saves time (every turn's words are stemmed).
    """
    return str(_english_stemmer().stemWord(word))


def plural_stem(word: str) -> str:
    """A crude, symmetric stem for matching words a rule names: 'sisters', "sister's" and
    'sister' meet, as do 'parties'/'party' and 'boxes'/'box'; unlike Snowball's, the stem less a
    final 'y' starts the word, so a substring probe finds every word with that stem."""
    word = word.strip("'")
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def inflection_stem(word: str) -> str:
    """plural_stem, and the -ed, -ing and final -e forms of a word meet too ('divorce',
    'divorced', 'divorcing' and 'divorces' give 'divorc'; 'planned' gives 'plan'), for a rule
    that must hide a subject however it is said. The stem still starts the word."""
    stem = plural_stem(word)
    for suffix in ("ing", "ed"):
        if len(stem) > len(suffix) + 3 and stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            # A doubled final consonant goes with the suffix ("planned", "shopping").
            if stem[-1] == stem[-2] and stem[-1] not in "aeiouls":
                stem = stem[:-1]
            return stem
    if len(stem) > 4 and stem.endswith("e") and not stem.endswith("ee"):
        return stem[:-1]
    return stem


def fold(text: str) -> str:
    """Case-folded text with typographic apostrophes made plain, as words are compared."""
    return text.casefold().replace("\u2019", "'")


def _english_stemmer() -> Any:
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return stemmer


def entity_node_id(label: str) -> str:
    """Graph node id of an entity label ("New York" -> "entity:new-york")."""
    return "entity:" + "-".join(label.lower().split())
