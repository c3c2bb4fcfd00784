"""Could a request touch the user's standing constraints? (Issue: constraints reach every
turn they matter to.) "Plan a weekend in Lisbon" names no allergy, yet an answer to it must
honour one.

Three ways in, any one suffices, cheapest first:
1. the request's words name a domain standing constraints matter to (text.py's list);
2. by meaning: the request's sentence embedding is close to one of the DOMAIN_EXAMPLES
   (short requests about food, drink, travel, activities, health, shopping, events), or
   to the text of one of the constraints itself;
3. without an encoder (not installed, or it failed) every request touches them: pushing a
   few short atoms is cheap, missing an allergy is not.

Deterministic: the encoder gives the same vector for the same text, each text is encoded
on its own (batch padding never changes a vector), and the thresholds are fixed.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

log = logging.getLogger(__name__)

# Requests as a user would say them, one or more per domain; a request is compared with
# each and the closest counts. Short requests embed near other short requests of the same
# topic far more reliably than abstract descriptions do.
DOMAIN_EXAMPLES = (
    # food, cooking, restaurants
    "what should I eat",
    "suggest a recipe",
    "what should I make for dinner",
    "a snack",
    "order food delivery",
    "go out to a restaurant",
    "buy groceries",
    # drink
    "get a drink",
    "coffee or tea",
    "a glass of wine or beer",
    "try a new place to eat",
    "find a sushi or thai place",
    # travel
    "plan a trip",
    "book a flight and a hotel",
    "a vacation abroad",
    "we're going to another city next week",
    "visiting Paris in the spring",
    # activities and sport
    "go for a run",
    "go hiking",
    "a workout at the gym",
    "play a sport",
    # medication and health
    "take a pill for the pain",
    "I feel sick",
    "see a doctor",
    # purchases
    "buy something online",
    "a gift for someone",
    "go shopping",
    # events
    "throw a party",
    "go to a wedding",
    "go to a concert or a show",
    "a day out with the kids",
)
# Cosine similarity (unit vectors: the dot product) from which a request touches a domain.
# On 30 requests that touch a domain and 30 that do not (tests/unit/retrieval_ranker), the
# touching ones score 0.33 and up, the others 0.12-0.40: generous, a few unrelated requests
# get the constraints too.
DOMAIN_THRESHOLD = 0.30
# Against a constraint's own text ("User is allergic to peanuts."): requests about the
# constraint itself score above this.
CONSTRAINT_THRESHOLD = 0.30

# Constraint texts whose vectors are kept apart from the encoder's own cache, which every
# request's one-off text passes through: under load those pushed the constraints out, and
# each Brief encoded up to MAX_STANDING of them again (a full model pass each).
CONSTRAINT_CACHE_SIZE = 8192

Vectors = NDArray[np.float32]


class SentenceEncoder(Protocol):
    """memmesh.embedding's encoder, as far as this module uses it."""

    def encode(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised float32 row per text."""
        ...


class ConstraintReach:
    """Decides whether a request could touch standing constraints."""

    def __init__(
        self, encoder: SentenceEncoder | None, cache_size: int = CONSTRAINT_CACHE_SIZE
    ) -> None:
        self._encoder = encoder
        self._examples: Vectors | None = None
        self._cache_size = cache_size
        self._constraints: OrderedDict[str, Vectors] = OrderedDict()
        self._constraints_lock = threading.Lock()  # touches() runs on worker threads

    def warm(self) -> None:
        """Encode the domain examples now (at start-up) rather than on the first Brief that
        needs them; a failure leaves that to the first such Brief, which falls back safely."""
        if self._encoder is None or self._examples is not None:
            return
        try:
            self._examples = _examples_of(self._encoder)
        except Exception:
            log.exception("sentence encoder failed on the domain examples")

    @property
    def semantic(self) -> bool:
        """Whether the decision can use meaning (an encoder is present)."""
        return self._encoder is not None

    def touches(self, query: str, names_domain: bool, constraint_texts: Sequence[str]) -> bool:
        """Whether `query` could touch the constraints whose texts are given; `names_domain`
        is the word-list verdict (text.Analyzer.names_constraint_domain)."""
        if not constraint_texts:
            return False
        if names_domain or self._encoder is None:
            return True
        try:
            return self._close_by_meaning(self._encoder, query, constraint_texts)
        except Exception:  # an encoder that fails must not take an allergy out of a Brief
            log.exception("sentence encoder failed; pushing the standing constraints")
            return True

    def _close_by_meaning(
        self, encoder: SentenceEncoder, query: str, constraint_texts: Sequence[str]
    ) -> bool:
        if self._examples is None:
            self._examples = _examples_of(encoder)
        asked = encoder.encode([query])[0]
        if float(np.max(self._examples @ asked)) >= DOMAIN_THRESHOLD:
            return True
        constraints = np.vstack([self._constraint_vector(encoder, t) for t in constraint_texts])
        return float(np.max(constraints @ asked)) >= CONSTRAINT_THRESHOLD

    def forget_constraints(self) -> None:
        """Drop every kept constraint vector and its text (an erasure: forgotten words must
        not stay in memory; the next Briefs encode what remains)."""
        with self._constraints_lock:
            self._constraints.clear()

    def _constraint_vector(self, encoder: SentenceEncoder, text: str) -> Vectors:
        """A constraint's vector, encoded on its own once and kept (least recently used out)."""
        with self._constraints_lock:
            cached = self._constraints.get(text)
            if cached is not None:
                self._constraints.move_to_end(text)
                return cached
        vector = encoder.encode([text])
        with self._constraints_lock:
            self._constraints[text] = vector
            while len(self._constraints) > self._cache_size:
                self._constraints.popitem(last=False)
        return vector


def _examples_of(encoder: SentenceEncoder) -> Vectors:
    return np.vstack([encoder.encode([text]) for text in DOMAIN_EXAMPLES])
