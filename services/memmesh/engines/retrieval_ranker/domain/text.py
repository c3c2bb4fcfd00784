"""Text analysis for the lexical index: tokens, English stop words, Snowball stems."""

from __future__ import annotations

import re

import snowballstemmer

# The common English stop-word list (NLTK's), so scores compare with standard BM25 setups.
STOP_WORDS = frozenset(
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

# Words that ask about memory in general; a query made only of these is generic.
GENERIC_RECALL_WORDS = frozenset({"remember", "recall", "know", "memory", "memories", "tell", "anything"})

# Standing constraints matter to requests that never name them: "what should I cook?"
# needs "User does not eat meat." A query about food or drink also asks for the words
# diet and allergy atoms are written in (seed 001 §2.11.2: retrieve what is relevant).
FOOD_WORDS = frozenset(
    """
    eat eating food foods cook cooking dinner lunch breakfast brunch snack snacks meal meals
    recipe recipes restaurant restaurants menu grocery groceries bake baking dessert drink
    drinks cuisine dish dishes order takeout
    """.split()
)
DIET_WORDS = frozenset(
    """
    diet vegetarian vegan pescatarian kosher halal gluten lactose dairy allergic allergy
    meat pork beef nuts peanuts shellfish alcohol sober
    """.split()
)

_POSSESSIVE = re.compile(r"['’]s\b")
_WORD = re.compile(r"[^\W_]+")
_STEM_CACHE_LIMIT = 200_000


class Analyzer:
    """Turns text into index terms; the stem cache only saves time, never changes a result."""

    def __init__(self) -> None:
        self._stemmer = snowballstemmer.stemmer("english")
        self._stems: dict[str, str] = {}
        self._generic_stems = frozenset(self._stem(w) for w in GENERIC_RECALL_WORDS)
        self._food_stems = frozenset(self._stem(w) for w in FOOD_WORDS)
        self._diet_stems = frozenset(self._stem(w) for w in DIET_WORDS)

    def _stem(self, word: str) -> str:
        stem = self._stems.get(word)
        if stem is None:
            if len(self._stems) >= _STEM_CACHE_LIMIT:
                self._stems.clear()
            stem = self._stemmer.stemWord(word)
            self._stems[word] = stem
        return stem

    def terms(self, text: str) -> list[str]:
        """Stemmed content terms of a text, in text order, stop words and single letters dropped."""
        words = _WORD.findall(_POSSESSIVE.sub("", text.casefold()))
        return [self._stem(w) for w in words if w not in STOP_WORDS and (len(w) > 1 or w.isdigit())]

    def query_terms(self, text: str) -> tuple[str, ...]:
        """Distinct scoring terms of a query, sorted; generic recall words do not count, and a
        query about food also looks for diet and allergy words."""
        terms = {t for t in self.terms(text) if t not in self._generic_stems}
        if terms & self._food_stems:
            terms |= self._diet_stems
        return tuple(sorted(terms))
