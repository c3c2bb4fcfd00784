"""Transcript normalisation, clause splitting and rendering helpers (pure string work)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memmesh.text import SLUG_STOP_WORDS

# Speech-to-text spellings of contractions and a few frequent misspellings of words the
# rules key on; applied word-wise, case-insensitively.
_SPELLING = {
    "im": "I'm",
    "i'm": "I'm",
    "i've": "I've",
    "i'd": "I'd",
    "i'll": "I'll",
    "i": "I",
    "ive": "I've",
    "dont": "don't",
    "cant": "can't",
    "wont": "won't",
    "doesnt": "doesn't",
    "didnt": "didn't",
    "isnt": "isn't",
    "thats": "that's",
    "whats": "what's",
    "theyre": "they're",
    "weve": "we've",
    "shes": "she's",
    "hes": "he's",
    "theyve": "they've",
    "youve": "you've",
    "youre": "you're",
    "alergic": "allergic",
    "allergc": "allergic",
    "favourite": "favorite",
    "fave": "favorite",
    "fav": "favorite",
    "togther": "together",
    "vegeterian": "vegetarian",
    "cuz": "because",
    "coz": "because",
    "'cause": "because",
    "cause": "because",
    "wanna": "want to",
    "gonna": "going to",
    "gotta": "got to",
    "u": "you",
    "ur": "your",
}
_FILLERS = [
    r"\b(?:just so you know|by the way|btw|fyi|for what it's worth)\b,?",
    # "Also you must know I am living in Lyon now": said so it is kept, as "fyi" is.
    r"\b(?:(?:I )?(?:thought|figured) )?you (?:must|should|need to|have to|got to|ought to) know"
    r"(?: that)?\b,?",
    r"\b(?:u+m+|u+h+|e+r+m+|h+m+|uhm+)\b,?",
    r"(?:(?<=,)|^)\s*you know\b,?|\byou know(?=\s*(?:[,.!?]|$))",
    r"\bi mean,",
    r"\b(?:honestly|literally|actually|seriously|tbh|ngl|to be honest)\b,?",
    # Openers, however many, at the start of the turn or of a later sentence ("so yeah, …",
    # "… about Dave? yeah forget that"); kept when nothing follows them ("yeah.").
    r"(?:^|(?<=[.?!]))\s*(?:(?:ok|okay|well|so|hey|anyway|yeah|yep|alright)\b[,!]?\s*)+(?=\w)",
]
# "like" is a filler before numbers/degree words and after commas, a verb elsewhere.
_LIKE_FILLER = re.compile(
    # ("like I said" recalls what was said before: it stays.)
    r"(?:(?<=,)\s*like\b(?!\s+I\s+(?:said|mentioned|told you)\b)|"
    r"(?P<lead>\b(?:since|for|about|at|is|was|it's)\s+)like\b(?=\s)|"
    # "um so like i really love…": opening a sentence, before its subject.
    r"(?:^|(?<=[.?!]))\s*like\b(?=\s+(?:i|i'm|im|i've|ive|we|we're|my)\b)|"
    # "so like hiking is totally my jam": opening a sentence before its subject and verb.
    r"(?:^|(?<=[.?!]))\s*like\b(?=\s+(?!(?:this|that|it|when|if|you)\b)[\w'-]+(?:\s+[\w'-]+)?"
    r"\s+(?:is|are|was|were)\b)|"
    r"\blike\b(?=\s+(?:\d|one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|"
    r"fifty|a hundred|seriously|super|really|totally|zero)\b)|"
    # "like so long", but not after its subject or a negation: "I don't like so much the jazz".
    r"(?<!\bi )(?<!\bwe )(?<!\bthey )(?<!\bdon't )(?<!\bdont )(?<!\bnot )(?<!\bdo )"
    r"\blike\b(?=\s+so\b)|"
    # "i like didnt drink": before a negated or an emphatic verb it is a filler too.
    r"\blike\b(?=\s+(?:didn't|didnt|don't|dont|can't|cant|won't|never|literally|actually)\b)|"
    # "can you like forget…": a filler between a request's lead and its verb.
    r"(?P<asking>\b(?:can you|could you|just|please)\s+)like\b(?=\s+(?:forget|delete|erase|wipe|"
    r"remove|clear|stop|not|never|remember|save|store|keep|tell|give|mention|bring|talk)\b))",
    re.I,
)
# A spoken restart says the same words twice once the fillers are gone ("my uh my doctor",
# "forget this um this thread", "about my about my diet"): one of them is kept. "had had" and
# "that that" can be meant. A word starts with a letter: "'sleep apnea', 'sleep paralysis'"
# repeats only a quote mark.
_RESTART = re.compile(
    r"\b(?P<said>(?!(?:had|that)\b)[A-Za-z][A-Za-z']*(?:\s+[A-Za-z']+){0,2})(?:\s*,?\s+(?P=said)\b)+",
    re.I,
)
_ABBREVIATIONS = re.compile(r"\b(Dr|Mr|Mrs|Ms|St|Prof|Jr|Sr|vs|e\.g|i\.e)\.", re.I)
_SENTENCE_END = re.compile(r"(?:\.{2,}|…|[.!?]+)(?=\s|$)")
# "… and also I take pills for cholesterol": a filler or a lead adverb may come first.
_SUBJECT_START = re.compile(
    r"^(?:(?:also|then|now|still|plus|uh|um|so|honestly|anyway|yes|yeah|well|oh)\s+){0,2}"
    # "…and last time they ignored me": a when before the subject starts a clause too.
    r"(?:(?:last time|last night|last week|yesterday|today|this morning|the other day)\s+)?"
    r"(?:I|I'm|I've|I'd|I'll|my|we|we're|we've|he|she|they|it|it's|that's|he's|she's|they're|"
    r"me|there's|you)\b",
    re.I,
)
_VERB_SOON = re.compile(
    r"^(?:\S+\s+){0,3}(?:is|are|'s|was|were|has|have|does|do|can|can't)\b", re.I
)
_SO_BLOCKERS = frozenset(
    """i'm im am is are was were be been being it's that's he's she's they're
you're we're feel feeling felt not get got look looks sound sounds seem seems and or just really so
even""".split()
)
CONNECTORS = (
    "because",
    "since",
    "so",
    "and",
    "but",
    "which",
    "though",
    "although",
    "also",
    "plus",
    "as",
    "then",
)


@dataclass(frozen=True)
class Clause:
    """A clause of a turn: its text, the word that introduced it and where it sat."""

    text: str
    connector: str
    sentence: int
    index: int
    is_question: bool
    # The user asked for it to be kept ("keep in mind I use a CPAP machine every night").
    asked_to_keep: bool = False


# "Yeah, Caroline.", "Thanks, Mel!", "Woohoo Melanie!": the listener called by name after a
# greeting, thanks or cheer. The name says nothing of the user, and left alone a clause of
# just a name reads as a person or a taste. Not after "no", "sorry" or "okay", which lead a
# correction's word ("sorry, Tuesday").
_VOCATIVE = re.compile(
    r"(?P<lead>\b(?i:hey|hi|hello|heya|thanks|thank you|thanks so much|thank you so much|woohoo|"
    r"wow|whoa|aww?|congrats|congratulations|yeah|yep|yup|same here|totally|cheers|haha|yay|"
    r"good to see you too|nice to hear from you|great to hear from you)[,!]?\s*)"
    r"[A-Z][a-z]+(?=\s*[,.!?])"
)


def normalize(text: str) -> str:
    """Return the turn with uniform quotes, expanded transcript spellings and fillers removed."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    text = text.replace("\u201d", '"').replace("\u2014", " - ").replace("\u2013", " - ")
    text = re.sub(r"[A-Za-z']+", _respell, text)
    text = _VOCATIVE.sub(r"\g<lead>", text)
    for pattern in _FILLERS:
        text = re.sub(pattern, " ", text, flags=re.I)
    text = _LIKE_FILLER.sub(lambda m: m.group("lead") or m.group("asking") or " ", text)
    text = _RESTART.sub(r"\g<said>", text)
    # Learner English: "I don't like so much the jazz", "I like very much the football" say
    # what is liked with the degree before it; the thing liked is the object.
    text = _DEGREE_BEFORE_OBJECT.sub(r"\g<verb> ", text)
    # "my names tariq": a transcript's "name's" without its apostrophe.
    text = re.sub(
        r"\b(my) names\b(?=\s+[A-Za-z])(?!\s+(?:are|were|is)\b)", r"\1 name's", text, flags=re.I
    )
    # "never, ever" and "no, never" are one emphasis, not two clauses.
    text = re.sub(r"\b(never|not),\s+(ever)\b", r"\1 \2", text, flags=re.I)
    # Learner English: "I didn't said pasta" is "I didn't say pasta".
    text = re.sub(r"\b(didn't|did not)\s+said\b", r"\1 say", text, flags=re.I)
    # "as a nurse I work nights": the role is its own clause ("as a nurse and I…" is not one:
    # the "and" opens the next clause).
    text = re.sub(
        r"\b(as an? [\w-]+(?: (?!(?:and|but|or|so)\b)[\w-]+){0,2}?)\s+"
        r"(?=I\b|I'm\b|what\b|how\b|which\b|can\b|do\b|should\b|is\b|any\b)",
        r"\1, ",
        text,
        flags=re.I,
    )
    # "I'm a vegetarian who hates tofu": what the user is, then what they like, two clauses.
    text = _WHO_LIKES.sub(_who_likes_said_plainly, text)
    text = re.sub(r"\s+([,.!?;:])", r"\1", text)
    text = re.sub(r",(\s*,)+", ",", text)
    text = re.sub(r"\s+", " ", text).strip(" ,")
    return text


_DEGREE_BEFORE_OBJECT = re.compile(
    r"\b(?P<verb>like|love|enjoy|hate)\s+(?:so|very|too)\s+much\s+(?=(?:the|a|an|my|this|that)\b)",
    re.I,
)
_WHO_LIKES = re.compile(
    r"\b(?P<am>I'm|I am)\s+(?P<what>an?\s+[\w-]+(?:\s+[\w-]+){0,2}?)\s+who\s+"
    r"(?P<verb>hates|loves|likes|adores|prefers|can't stand|cannot stand|doesn't like|does not like|"
    r"doesn't eat|does not eat|doesn't drink|does not drink)\b",
    re.I,
)
_FIRST_PERSON_VERB = {"doesn't": "don't", "does": "do", "hates": "hate", "loves": "love"}


def _who_likes_said_plainly(match: re.Match[str]) -> str:
    words = match.group("verb").split()
    first = words[0].lower()
    words[0] = _FIRST_PERSON_VERB.get(first) or (first[:-1] if first.endswith("s") else first)
    return f"{match.group('am')} {match.group('what')}, I {' '.join(words)}"


def _respell(match: re.Match[str]) -> str:
    word = match.group(0)
    return _SPELLING.get(word.lower(), word)


def split_clauses(text: str) -> list[Clause]:
    """Split a normalised turn into clauses on punctuation and clause-joining conjunctions."""
    protected = _ABBREVIATIONS.sub(lambda m: m.group(1) + "\u0000", text)
    clauses: list[Clause] = []
    pieces = _SENTENCE_END.split(protected)
    enders = _SENTENCE_END.findall(protected)
    for sentence_no, sentence in enumerate(pieces):
        ender = enders[sentence_no] if sentence_no < len(enders) else ""
        parts = _split_sentence(sentence.replace("\u0000", "."))
        # "Music's amazing, isn't it?": a tag makes the whole sentence a question.
        tagged = "?" in ender and bool(parts) and bool(_QUESTION_TAG.match(parts[-1][1]))
        for part_no, (connector, body) in enumerate(parts):
            is_last = part_no == len(parts) - 1
            clauses.append(
                Clause(
                    text=body,
                    connector=connector,
                    sentence=sentence_no,
                    index=len(clauses),
                    is_question=("?" in ender and (is_last or tagged)) or looks_like_question(body),
                )
            )
    return [c for c in clauses if c.text]


# Tags that ask the listener to agree with what the sentence said of something.
_QUESTION_TAG = re.compile(
    r"^(?:isn't|wasn't|aren't|weren't|ain't|doesn't|don't|didn't)\s+(?:it|they|that|this|he|she|you)"
    r"(?:\s+think)?$|^don't you think$",
    re.I,
)


# Commas, semicolons, colons and spaced dashes break a sentence into clauses, except a comma
# or colon inside a number or a time ("the 7:40 bus", "1,500 steps").
_CLAUSE_BREAK = re.compile(r"\s*(?:;|(?<!\d)[,:]|[,:](?!\d))\s*|\s+-\s+")


def _split_sentence(sentence: str) -> list[tuple[str, str]]:
    result: list[tuple[str, str]] = []
    for chunk in _CLAUSE_BREAK.split(sentence):
        for piece in _split_run_on(chunk.strip()):
            result.extend(_split_conjunctions(piece))
    return [(c, b.strip(" ,.")) for c, b in result if b.strip(" ,.")]


# Unpunctuated speech runs statements together ("my brain is fried I'm a nurse"): a new
# "I'm" after a few words starts a new clause unless the word before it binds it to what
# came first ("I think I'm", "the thing I'm", "so I'm").
_RUN_ON_SUBJECT = re.compile(r"^(?:I'm|I am)$", re.I)
_BINDS_NEXT = frozenset(
    """that and but or because cause cuz cos if when so as since than where which who what how
    why like think thought know knew guess said say mean feel felt hope bet sure whether until
    says saying tell tells telling told thinks thinking reckon reckons believe believes claim
    claims insist insists heard hear knows realise realize realised realized
    before after while though although unless thing things everything anything something one
    person kind sort reason way time place where's now then also just even still all yes yeah
    no well oh okay ok i""".split()
)
_RUN_ON_MIN_WORDS = 4
# "... without stairs I walk with a cane", "plan meals for the week we keep halal at home": a
# bare "I" or "we" starts a clause of its own too when a verb of lasting habit or state
# follows it.
_RUN_ON_VERBS = frozenset(
    """walk walks use work live only have take wear drive speak keep eat don't can't cannot
    never always love hate own teach study""".split()
)
# "... grab my inhaler refill i've had asthma my whole life": an "I've" that tells what has
# long held starts a clause of its own as well.
_RUN_ON_SINCE = frozenset("had got been always never lived worked used known".split())


def _starts_run_on(words: list[str], i: int) -> bool:
    if _RUN_ON_SUBJECT.match(words[i]):
        return True
    following = words[i + 1].lower() if i + 1 < len(words) else ""
    if words[i].lower() in ("i've", "ive"):
        # "the therapist i've been seeing": "been" before an -ing word goes on with what
        # came first.
        after = words[i + 2].lower() if i + 2 < len(words) else ""
        return following in _RUN_ON_SINCE and not (following == "been" and after.endswith("ing"))
    if words[i] in ("I", "i", "we") and following == "do":
        # "hiking is my jam I do it every weekend": a habit of the thing just named.
        after = words[i + 2].lower() if i + 2 < len(words) else ""
        return after in ("it", "that", "this", "them")
    return words[i] in ("I", "i", "we") and following in _RUN_ON_VERBS


# "i hate cruises like the idea of being stuck on a boat": a spoken "like" that goes on to
# say why, after a clause that is whole (not the verb "like": "I like the idea").
_LIKE_GOES_ON = frozenset({"the idea", "being", "when", "how", "the whole"})
_LIKE_VERB_BEFORE = frozenset(
    "i we you they he she don't dont do not really would also just kinda sorta feel".split()
)


def _split_run_on(chunk: str) -> list[str]:
    words = chunk.split()
    pieces: list[str] = []
    start = 0
    for i in range(len(words)):
        if (
            i - start >= _RUN_ON_MIN_WORDS
            and _starts_run_on(words, i)
            and words[i - 1].lower().strip(".,") not in _BINDS_NEXT
        ):
            pieces.append(" ".join(words[start:i]))
            start = i
        elif (
            i - start >= 3
            and words[i].lower() == "like"
            and words[i - 1].lower() not in _LIKE_VERB_BEFORE
            and (
                " ".join(words[i + 1 : i + 3]).lower() in _LIKE_GOES_ON
                or " ".join(words[i + 1 : i + 2]).lower() in _LIKE_GOES_ON
            )
        ):
            pieces.append(" ".join(words[start:i]))
            start = i + 1
    pieces.append(" ".join(words[start:]))
    return [piece for piece in pieces if piece]


def _split_conjunctions(chunk: str) -> list[tuple[str, str]]:
    words = chunk.split()
    parts: list[tuple[str, str]] = []
    connector, start = "", 0
    for i, word in enumerate(words):
        low = word.lower()
        if i == start or low not in CONNECTORS:
            continue
        rest = " ".join(words[i + 1 :])
        left = words[start:i]
        if _is_clause_boundary(low, left, rest):
            parts.append((connector, " ".join(left)))
            connector, start = low, i + 1
    parts.append((connector, " ".join(words[start:])))
    return [_strip_connector(c, b) for c, b in parts]


def _is_clause_boundary(conj: str, left: list[str], rest: str) -> bool:
    if not rest or len(left) < 2:
        return False
    if conj in ("because", "but", "which", "though", "although"):
        # "in hospital because of an asthma attack": "because of" opens a phrase, not a clause.
        return not (conj == "because" and rest.lower().startswith("of "))
    if conj == "so":
        return left[-1].lower() not in _SO_BLOCKERS and len(rest.split()) >= 2
    if conj in ("since", "as"):
        return bool(_SUBJECT_START.match(rest))
    if conj == "and":
        # "... and uh please always give me transcripts": a request starts a clause too.
        return bool(
            _SUBJECT_START.match(rest)
            or _VERB_SOON.match(rest)
            or re.match(r"^(?:(?:uh|um|also)\s+)?please\b", rest, re.I)
        )
    return False


def _strip_connector(connector: str, body: str) -> tuple[str, str]:
    words = body.split()
    while words and (
        words[0].lower() in CONNECTORS
        # "even though I've been a paralegal for years": the concession is the connector.
        or (words[0].lower() == "even" and len(words) > 1 and words[1].lower() == "though")
    ):
        if words[0].lower() == "even":
            words = words[1:]
        connector = connector or words[0].lower()
        words = words[1:]
    return connector, " ".join(words)


_QUESTION_START = re.compile(
    r"^(?:what|what's|whats|who|who's|whom|whose|where|where's|when|why|how|how's|which|"
    r"got any|any)\b|^(?:is|are|am|was|were|do|does|did|can|could|would|will|should|shall|may|"
    r"might|have|has|isn't|aren't|don't|doesn't|won't|wouldn't|shouldn't|can't|couldn't)\s+"
    r"(?:you|I|we|it|he|she|they|there|that|this|the|my|your|anyone|anybody|someone)\b",
    re.I,
)


def looks_like_question(text: str) -> bool:
    """True when the clause is phrased as a question even without a question mark."""
    return bool(_QUESTION_START.match(text))


_PRONOUNS = [
    (r"\bI'm\b", "they're"),
    (r"\bI am\b", "they are"),
    (r"\bI've\b", "they have"),
    (r"\bI'd\b", "they would"),
    (r"\bI'll\b", "they will"),
    (r"\bmyself\b", "themselves"),
    # "mine's Frasier": the contraction is "mine is", not a possessive.
    (r"\bmine's\b", "theirs is"),
    (r"\bmine\b", "theirs"),
    (r"\bmy\b", "their"),
    (r"\bme\b", "them"),
    (r"\bI\b", "they"),
    (r"\byour\b", "the assistant's"),
    (r"\byou\b", "the assistant"),
]


def indefinite_article(word: str) -> str:
    """ "a" or "an" before a word, by its first letter."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def third_person(phrase: str) -> str:
    """Rewrite first/second-person pronouns of a phrase from the user's to a narrator's view."""
    for pattern, replacement in _PRONOUNS:
        phrase = re.sub(pattern, replacement, phrase, flags=re.I if pattern != r"\bI\b" else 0)
    return phrase


_IRREGULAR_3SG = {
    "have": "has",
    "do": "does",
    "go": "goes",
    "be": "is",
    "am": "is",
    "'m": "is",
    "can": "can",
    "can't": "can't",
    "won't": "won't",
    "will": "will",
    # A plural subject rendered as the user ("my partner and I are teachers").
    "are": "is",
    "'re": "is",
    "were": "was",
    "was": "was",
    "could": "could",
    "would": "would",
    "should": "should",
    "must": "must",
    "might": "might",
}


def conjugate_3sg(verb: str) -> str:
    """Third-person singular present of an English verb ("grab" -> "grabs")."""
    low = verb.lower()
    if low in _IRREGULAR_3SG:
        return _IRREGULAR_3SG[low]
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


# The frames the learned path writes a clause's fact in ("User's taste: ..."), by category,
# and for a clause of no category.
LEARNED_LEADS = {
    "preference": "User's taste:",
    "relationship": "User's circle:",
    "identity": "User's background:",
    "constraint": "User's limit:",
}
LEARNED_DEFAULT_LEAD = "User's note:"


def sentence_case_fact(text: str) -> str:
    """Tidy a rendered fact: single spaces, no dangling punctuation, one final period."""
    text = re.sub(r"\s+", " ", text).strip(" ,;:-")
    text = re.sub(r"\s+([,.])", r"\1", text)
    return text.rstrip(".!?") + "."


def slug(phrase: str) -> str:
    """Stable key fragment for a phrase: lowercase content words, simple plurals folded."""
    words = re.findall(r"[A-Za-z0-9+#]+", phrase)
    kept = [
        w.lower() if w[:1].isupper() else _singular(w.lower())
        for w in words
        if w.lower() not in SLUG_STOP_WORDS
    ]
    return "_".join(kept) or "general"


def _singular(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word
