"""Text analysis for the lexical index: index terms and what a query is scored by (tokens, stop
words and stems come from memmesh.text)."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from concurrent.futures import Executor
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from memmesh.engines.retrieval_ranker.domain.dense import QueryVectors, quantised
from memmesh.text import INDEX_STOP_WORDS, addressed_names, index_words, stem

# Words whose stems show a change of stemmer in the analyzer's fingerprint (inflections,
# suffixes and irregular forms Snowball's versions have treated differently).
FINGERPRINT_PROBE = (
    "running runs ran generously generalization happily cries cried flying skies dying lying "
    "agreed feed sized knitting conditional relational electricity hopefulness organizations "
    "news atlas cosmos bias andes innings outing canning herring earring proceed exceed "
    "succeed skis sky's Café naïve 2024 3.5 vegetarian allergies"
)
# Raised when terms() changes in a way the fingerprint cannot see.
ANALYSIS_VERSION = 2

# Past forms of irregular verbs, read as their base form: Snowball only strips suffixes, so
# "where did I grow up" never met "I grew up in Guadalajara", nor "when did she go camping"
# "we went camping". Forms as often another word stay out (left, saw, felt, found, ground,
# lay, rose, bore, born, led, fell, wound, lit, stood, kept, bit, fed, dove, lent, shot, sat).
_IRREGULAR_PAIRS = """
arose arise ate eat awoke awake awoken awake became become began begin begun begin bent
bend blew blow blown blow bought buy bred breed broke break broken break brought bring
built build burnt burn came come caught catch chose choose chosen choose crept creep
dealt deal drank drink drawn draw dreamt dream drew draw driven drive drove drive drunk
drink dug dig eaten eat fled flee flew fly flown fly flung fling forbade forbid forgave
forgive forgiven forgive forgot forget forgotten forget fought fight froze freeze frozen
freeze gave give given give gone go grew grow grown grow heard hear held hold hid hide
hidden hide hung hang knelt kneel knew know known know learnt learn lost lose made make
meant mean met meet paid pay proven prove ran run rang ring ridden ride risen rise rode
ride rung ring said say sang sing sank sink sent send shaken shake shone shine shook
shake shown show shrank shrink slept sleep slid slide slung sling sold sell sought seek
spent spend spoke speak spoken speak sprang spring spun spin stank stink stole steal
stolen steal strode stride struck strike stuck stick stung sting sung sing sunk sink
swam swim swept sweep swore swear sworn swear swum swim swung swing taken take taught
teach thought think threw throw thrown throw told tell took take tore tear torn tear
understood understand went go wept weep withdrew withdraw woke wake woken wake won win
wore wear worn wear wove weave written write wrote write
""".split()
IRREGULAR_FORMS = dict(zip(_IRREGULAR_PAIRS[0::2], _IRREGULAR_PAIRS[1::2], strict=True))


# Words that ask about memory in general; a query made only of these is generic.
GENERIC_RECALL_WORDS = frozenset(
    {"remember", "recall", "know", "memory", "memories", "tell", "anything"}
)

# Words of requests about food or drink, one of the domains a standing constraint matters to.
FOOD_WORDS = frozenset(
    """
    eat eating food foods cook cooking dinner lunch breakfast brunch snack snacks meal meals
    recipe recipes restaurant restaurants menu grocery groceries bake baking dessert drink
    drinks cuisine dish dishes order takeout
    """.split()
)


# The domains a standing constraint (allergy, diet, health limit, medication, accessibility)
# can matter to, by the words that name them: a request with one of these words touches the
# user's standing constraints without asking the sentence encoder (domain/reach.py decides
# the rest by meaning). Generous on purpose: a missed allergy costs far more than one short
# extra atom.
CONSTRAINT_DOMAIN_WORDS = FOOD_WORDS | frozenset(
    """
    cook bake grill roast fry barbecue bbq potluck picnic party parties feast supper pizza
    burger sandwich salad soup pasta cake cookies chocolate candy sweets treat treats fruit
    coffee tea beer wine cocktail cocktails smoothie juice bar pub cafe bakery takeaway
    delivery catering buffet chef kitchen hungry thirsty starving taste flavor flavour
    trip travel travelling traveling vacation holiday holidays flight flights fly flying
    hotel hotels airbnb cruise weekend getaway abroad visit tour itinerary pack packing
    camping hike hiking walk walking run running marathon gym workout exercise sport sports
    swim swimming bike cycling yoga climb climbing ski skiing tennis football soccer match
    medicine medication medicines pill pills painkiller painkillers headache migraine fever
    cough cold flu sick ill pain ache nausea nauseous doctor pharmacy prescription vaccine
    shot symptoms allergy allergic health
    buy buying shop shopping purchase gift gifts present presents groceries supermarket
    market order store
    event events wedding birthday celebration celebrate concert festival show theater
    theatre cinema movie date anniversary gathering host hosting guests invite
    """.split()
)


class TextVectors(Protocol):
    """memmesh.embedding's static encoder, as far as the analyzer uses it."""

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One L2-normalised float32 row per text (zero for a text with no content)."""
        ...


class SentenceVectors(TextVectors, Protocol):
    """memmesh.embedding's sentence encoder, as far as the analyzer uses it: it keeps the
    vectors of texts it embedded, which an erasure drops."""

    def clear_cache(self) -> None:
        """Drop every kept vector."""
        ...


class Analyzer:
    """Turns text into index terms and a dense vector, and a query into the terms and the
    vector it is scored by."""

    def __init__(
        self, vectors: TextVectors | None = None, sentences: SentenceVectors | None = None
    ) -> None:
        # Without an encoder every vector is b'' and retrieval is BM25 alone; without the
        # sentence encoder every vector is the static table's.
        self._vectors = vectors
        self._sentences = sentences if vectors is not None else None
        # Which encoders made the vectors: stored vectors of others are derived again.
        self.vectors_id = ("static" if vectors is not None else "none") + (
            "+sentence" if self._sentences is not None else ""
        )
        self._generic_stems = frozenset(stem(w) for w in GENERIC_RECALL_WORDS)
        self._constraint_domain_stems = frozenset(stem(w) for w in CONSTRAINT_DOMAIN_WORDS)
        # Terms stored with a document (derived at write time) are reused only when made
        # by this same analysis: its version, its stop words and its stems of the probe.
        analysis = f"{ANALYSIS_VERSION}\x1f{' '.join(sorted(INDEX_STOP_WORDS))}\x1f"
        analysis += " ".join(self.terms(FINGERPRINT_PROBE))
        self.fingerprint = hashlib.sha256(analysis.encode()).hexdigest()[:12]

    def terms(self, text: str) -> list[str]:
        """Stemmed content terms of a text, in text order, stop words and single letters dropped."""
        words = index_words(text)
        return [
            stem(IRREGULAR_FORMS.get(w, w))
            for w in words
            if w not in INDEX_STOP_WORDS and (len(w) > 1 or w.isdigit())
        ]

    def vector(self, text: str) -> bytes:
        """The text's quantised dense vector (dense.py), b'' without an encoder or content."""
        if self._vectors is None or not text:
            return b""
        return quantised(self._vectors.encode([text])[0])

    def forget_cached(self) -> None:
        """Drop the vectors the sentence encoder keeps of texts it embedded (turns among
        them): an erasure leaves nothing derived from forgotten words in memory."""
        if self._sentences is not None:
            self._sentences.clear_cache()

    def sentence_vector(self, text: str) -> bytes:
        """The text's quantised vector by the sentence encoder, or by the static table
        without one; b'' without content (no content word, as for `vector`)."""
        vectors = self.query_vectors(text)
        return vectors.sentence or vectors.words

    def query_vectors(self, text: str, worker: Executor | None = None) -> QueryVectors:
        """The text's vector by each encoder (no sentence vector without that encoder);
        both b'' for a text with no content word. With a `worker` the sentence vector is
        computed there and comes back pending (QueryVectors.sentence_vector waits for it)."""
        words = self.vector(text)
        if self._sentences is None or not words:
            return QueryVectors(words)
        if worker is not None:
            return QueryVectors(words, pending=worker.submit(self._sentence_bytes, text))
        return QueryVectors(words, self._sentence_bytes(text))

    def _sentence_bytes(self, text: str) -> bytes:
        assert self._sentences is not None
        return quantised(self._sentences.encode([text])[0])

    def query_terms(self, text: str) -> tuple[str, ...]:
        """Distinct scoring terms of a query, sorted; generic recall words do not count."""
        return tuple(sorted({t for t in self.terms(text) if t not in self._generic_stems}))

    def addressed(self, text: str) -> tuple[str, ...]:
        """The index terms of the names the text addresses someone by, each once, sorted."""
        return tuple(sorted({stem(name.casefold()) for name in addressed_names(text)}))

    def without_addressed(self, query: str, names: Collection[str]) -> str:
        """The query without its words that are one of these names (index terms), or the
        query as it is when it has none or nothing else to be scored by."""
        words = index_words(query)
        if not names or not any(stem(word) in names for word in words):
            return query
        rest = " ".join(word for word in words if stem(word) not in names)
        return rest if self.query_terms(rest) else query

    def names_constraint_domain(self, query_terms: tuple[str, ...]) -> bool:
        """Whether a query's scoring terms name a domain standing constraints matter to."""
        return not self._constraint_domain_stems.isdisjoint(query_terms)
