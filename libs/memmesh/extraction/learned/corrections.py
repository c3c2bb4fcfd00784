"""Corrections learned from the corpus: which words of a turn were misheard, which were meant.

The rules hear a correction said in the shapes they were written for. This model reads any turn
the rules hear none in, as two linear models over hashed features of words and their places:
- a span model scores every run of one to four words as misheard, meant or neither, from the
  words in and around it, its shape (a number, a capitalised name, a spelled-out word) and how
  far it stands from the words corrections are said with ("not", "said", "meant", "wrote");
- a pair model chooses among the likeliest misheard and meant runs, or no correction at all,
  from the two runs' scores and what the pair looks like (how alike they sound, whether "not"
  stands between them, whether they are the same kind of thing).
Both train deterministically from zeros with numpy; features hash with CRC-32, so the same
turn and weights always give the same answer.
"""

from __future__ import annotations

import difflib
import re
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memmesh.extraction.learned.heads import adam_step
from memmesh.extraction.lexicon import KIN_ROLES, PERSON_ROLES, S_CONTRACTED_WORDS, TITLE_WORDS
from memmesh.extraction.model import Correction
from memmesh.text import CONVERSATION_STOP_WORDS

DIMENSION = 1 << 16
MAX_SPAN_TOKENS = 4
# The likeliest runs of each role the pair model chooses among.
ROLE_CANDIDATES = 6
# The span model's classes, in the order of its weight columns.
HEARD, MEANT, NEITHER = 0, 1, 2

_TOKEN = re.compile(r"[^\W_]+(?:['’.:/-][^\W_]+)*", re.UNICODE)
# Punctuation no misheard or meant run crosses.
_BREAK = re.compile(r"[,;!?()\"“”]|\.(?:\s|$)|\s[-–—]\s")
# Words corrections are said with: a run's distance from each is one of its features.
_CUES = frozenset(
    "not no nope said say says meant mean misheard heard hear wrote written typed spelled spelt "
    "spell put got called name named instead wrong sorry wait actually correct correction isn't "
    "wasn't aren't it's its is was but or i.e. like letter with".split()
)
_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety hundred thousand million half quarter first second third fourth fifth".split()
)
_KIN_WORDS = frozenset(
    word for word, role in PERSON_ROLES.items() if role in KIN_ROLES and " " not in word
)
# Words that recur in any turn: a feature names them, any other word only by its shape, so
# neither model learns one name or thing.
_CLOSED_CLASS = CONVERSATION_STOP_WORDS | _CUES | _NUMBER_WORDS
# A turn that may hold a correction at all: the model reads no other. (The normaliser drops
# "actually", so "it came out as Tyler, but it's actually Tayla" needs "came out".)
_MAY_CORRECT = re.compile(
    r"\b(?:not|no|n't|nt|isnt|wasnt|say|said|saying|meant|mean|misheard|heard|understood|wrote|"
    r"written|typed|spelled|spelt|spell|saved|down as|had it as|down|calling|understand|"
    r"sorry|wait|actually|instead|rather|"
    r"wrong|correct\w*|oops|scratch|came out|transcri\w+|fix)\b|n't\b",
    re.I,
)


@dataclass(frozen=True)
class Token:
    """A word of a turn, lowercased, with where it lies in the turn."""

    lower: str
    start: int
    end: int


@dataclass(frozen=True)
class Span:
    """Tokens first..last-1 of a turn."""

    first: int
    last: int


def tokens_of(text: str) -> list[Token]:
    """The words of a turn."""
    return [Token(m.group().lower(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def spans_of(text: str, tokens: Sequence[Token]) -> list[Span]:
    """Every run of one to MAX_SPAN_TOKENS words that crosses no clause punctuation."""
    joined = [
        not _BREAK.search(text[tokens[i].end : tokens[i + 1].start] + " ")
        for i in range(len(tokens) - 1)
    ]
    spans = []
    for first in range(len(tokens)):
        for last in range(first + 1, min(first + MAX_SPAN_TOKENS, len(tokens)) + 1):
            if last - 1 > first and not joined[last - 2]:
                break
            spans.append(Span(first, last))
    return spans


def span_text(text: str, tokens: Sequence[Token], span: Span) -> str:
    """The words of a run as the turn spells them."""
    return text[tokens[span.first].start : tokens[span.last - 1].end]


# A title before a name and a possessive after a word are not part of the value corrected
# ("Mrs. Adeyemi. Not Adeyami." corrects "Adeyami"; "you say Hannah's birthday, but I said
# Anna" corrects "Hannah"), as people label a correction.
_TITLE = re.compile(rf"^(?:{TITLE_WORDS})\.?\s+(?=\S)", re.I)
_POSSESSIVE = re.compile(r"(?<=\w)['’]s$", re.I)
# "it's", "that's", "he's": a contraction of "is", not a possessive.
_IS_CONTRACTED = re.compile(rf"(?:^|\s)(?:{S_CONTRACTED_WORDS})['’]s$", re.I)


def bare_value(words: str) -> str:
    """A run of words without a title before it or a possessive after it."""
    words = _TITLE.sub("", words)
    return words if _IS_CONTRACTED.search(words) else _POSSESSIVE.sub("", words)


# "he's nine, wait, no, he turned ten in May": a number put right is the number, not when.
_WHEN_AFTER = re.compile(r"\s+(?:in|on|at|since|last|this|next|by)\s+.*$", re.I)


def _number_alone(heard: str, meant: str) -> str:
    """The meant span without a time phrase after it when both spans are numbers."""
    counted = meant.split()[0] if meant.split() else ""
    if (
        heard.split()
        and all(_shape(w) == "num" for w in heard.split())
        and _shape(counted) == "num"
    ):
        return _WHEN_AFTER.sub("", meant)
    return meant


def _shape(word: str) -> str:
    if word.isdigit() or word.lower() in _NUMBER_WORDS or re.fullmatch(r"\d[\d:.,]*\w*", word):
        return "num"
    if re.fullmatch(r"(?:[A-Za-z]-){2,}[A-Za-z]", word):
        return "spelled"
    if word.lower() in _KIN_WORDS:
        # A role the user names a person by ("not my aunt, my godmother"): a kind of its own.
        return "kin"
    if word[:1].isupper():
        return "cap"
    return "low"


def _distance_bucket(distance: int) -> str:
    return str(distance) if abs(distance) <= 3 else ("far-" if distance < 0 else "far+")


class _TurnView:
    """What every run's features read of one turn, computed once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokens_of(text)
        self.words = [text[t.start : t.end] for t in self.tokens]
        self.shapes = [_shape(word) for word in self.words]
        self.kinds = [
            t.lower if t.lower in _CLOSED_CLASS else f"<{shape}>"
            for t, shape in zip(self.tokens, self.shapes, strict=True)
        ]
        self.cue_places: dict[str, list[int]] = {}
        for index, token in enumerate(self.tokens):
            if token.lower in _CUES:
                self.cue_places.setdefault(token.lower, []).append(index)
        # Whether a sentence or clause ends right before each token, and right after it.
        self.break_before = [
            index == 0 or bool(_BREAK.search(text[self.tokens[index - 1].end : t.start] + " "))
            for index, t in enumerate(self.tokens)
        ]
        self.punct_after = [
            text[t.end : self.tokens[index + 1].start].strip()[:1] or "_"
            if index + 1 < len(self.tokens)
            else "$"
            for index, t in enumerate(self.tokens)
        ]

    def word(self, index: int) -> str:
        if index < 0:
            return "<s>"
        if index >= len(self.tokens):
            return "</s>"
        return self.kinds[index]

    def span_features(self, span: Span) -> list[str]:
        first, last = span.first, span.last
        inner = [self.word(i) for i in range(first, last)]
        shapes = self.shapes[first:last]
        before, after = self.word(first - 1), self.word(last)
        features = [
            "bias",
            f"len={last - first}",
            f"first={inner[0]}",
            f"last={inner[-1]}",
            f"shape={'/'.join(shapes)}",
            f"prev={before}",
            f"prev2={self.word(first - 2)}|{before}",
            f"next={after}",
            f"next2={after}|{self.word(last + 1)}",
            f"around={before}|{after}",
            f"break_before={self.break_before[first]}",
            f"punct_after={self.punct_after[last - 1]}",
            f"prev&shape={before}|{shapes[0]}",
            f"next&shape={after}|{shapes[-1]}",
        ]
        features += [f"word={w}" for w in inner]
        if self.tokens[first].lower in _CUES or self.tokens[last - 1].lower in _CUES:
            features.append("cue_inside")
        quote_before = self.text[max(0, self.tokens[first].start - 1) : self.tokens[first].start]
        if quote_before in ("'", '"', "‘", "“"):
            features.append("quoted")
        for cue, places in self.cue_places.items():
            nearest = min(
                (
                    p - first if p < first else p - (last - 1)
                    for p in places
                    if not first <= p < last
                ),
                key=abs,
                default=None,
            )
            if nearest is not None and abs(nearest) <= 6:
                features.append(f"cue:{cue}@{_distance_bucket(nearest)}")
        return features

    def pair_features(self, heard: Span, meant: Span) -> list[str]:
        heard_words = [self.tokens[i].lower for i in range(heard.first, heard.last)]
        meant_words = [self.tokens[i].lower for i in range(meant.first, meant.last)]
        order = "heard_first" if heard.first < meant.first else "meant_first"
        lo, hi = (heard, meant) if heard.first < meant.first else (meant, heard)
        between = [self.tokens[i].lower for i in range(lo.last, hi.first)]
        gap = len(between)
        alike = difflib.SequenceMatcher(None, "".join(heard_words), "".join(meant_words)).ratio()
        heard_shape, meant_shape = self.shapes[heard.first], self.shapes[meant.first]
        features = [
            "pair",
            order,
            f"{order}&gap={_distance_bucket(gap)}",
            f"alike={min(int(alike * 10), 9)}",
            f"lens={heard.last - heard.first}|{meant.last - meant.first}",
            f"shapes={heard_shape}|{meant_shape}",
            f"same_shape={heard_shape == meant_shape}",
            f"shares_first={heard_words[0] == meant_words[0]}",
            f"shares_last={heard_words[-1] == meant_words[-1]}",
            f"shared={min(len(set(heard_words) & set(meant_words)), 2)}",
            # Parallel phrasing ("the fifth of june not the fifth of july", "my uncle, my
            # godfather"): the same words lead into both runs, or follow both.
            f"same_prev={self.word(heard.first - 1) == self.word(meant.first - 1)}",
            f"same_next={self.word(heard.last) == self.word(meant.last)}",
        ]
        if "not" in between or "n't" in between or any(w.endswith("n't") for w in between):
            features.append(f"{order}&not_between")
        if gap <= 3:
            features += [f"{order}&between={kind}" for kind in self.kinds[lo.last : hi.first]]
        features += [f"{order}&cue_between={w}" for w in sorted(set(between) & _CUES)]
        if self.break_before[hi.first]:
            features.append(f"{order}&break_between")
        return features

    def turn_features(self) -> list[str]:
        features = ["none"]
        features += [f"none&cue={cue}" for cue in self.cue_places]
        if self.text.rstrip().endswith("?"):
            features.append("none&question")
        return features


def _hashed(features: Iterable[str]) -> list[int]:
    return [zlib.crc32(f.encode("utf-8")) % DIMENSION for f in features]


@dataclass(frozen=True)
class _Candidates:
    """A turn's pair candidates: the runs, each row's feature indices and values, and which
    row is which pair (None for the row that says there is no correction)."""

    view: _TurnView
    pairs: list[tuple[Span, Span] | None]
    indices: list[list[int]]
    values: list[list[float]]


@dataclass(frozen=True)
class CorrectionModel:
    """The span model's weights (DIMENSION x 3) and the pair model's (DIMENSION)."""

    span_weights: np.ndarray
    pair_weights: np.ndarray
    # How far the best pair's score must stand above "no correction" (chosen by
    # cross-validation: see CORRECTION_MARGIN in train.py).
    margin: float = 0.0

    def span_log_probabilities(self, view: _TurnView, spans: Sequence[Span]) -> np.ndarray:
        """One row per run: log-probabilities of misheard, meant, neither."""
        rows = [_hashed(view.span_features(span)) for span in spans]
        starts = np.cumsum([0] + [len(row) for row in rows[:-1]])
        logits = np.add.reduceat(self.span_weights[np.concatenate(rows)], starts, axis=0)
        logits -= logits.max(axis=1, keepdims=True)
        return logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))  # type: ignore[no-any-return]

    def candidates(self, text: str) -> _Candidates | None:
        """The pair candidates of a turn, or None when it has too few words for a pair."""
        view = _TurnView(text)
        spans = spans_of(text, view.tokens)
        if len(spans) < 2:
            return None
        scores = self.span_log_probabilities(view, spans)
        heard_best = np.argsort(-scores[:, HEARD], kind="stable")[:ROLE_CANDIDATES]
        meant_best = np.argsort(-scores[:, MEANT], kind="stable")[:ROLE_CANDIDATES]
        pairs: list[tuple[Span, Span] | None] = [None]
        indices = [_hashed(view.turn_features())]
        values = [[1.0] * len(indices[0])]
        for h in heard_best:
            for m in meant_best:
                heard, meant = spans[int(h)], spans[int(m)]
                if heard.first < meant.last and meant.first < heard.last:
                    continue
                pair_indices = _hashed(view.pair_features(heard, meant))
                pairs.append((heard, meant))
                indices.append([*pair_indices, _SCORE_HEARD, _SCORE_MEANT])
                values.append(
                    [1.0] * len(pair_indices) + [float(scores[h, HEARD]), float(scores[m, MEANT])]
                )
        return _Candidates(view, pairs, indices, values)

    def find(self, text: str, margin: float | None = None) -> Correction | None:
        """The misheard and meant words of a turn, or None when it corrects nothing: the best
        pair must score `margin` above "none" (the model's own margin unless one is given)."""
        found = self.best_pair(text)
        if found is None or found[1] < (self.margin if margin is None else margin):
            return None
        return found[0]

    def best_pair(self, text: str) -> tuple[Correction, float] | None:
        """The likeliest correction of a turn and how far its score stands above "none"."""
        if not _MAY_CORRECT.search(text):
            return None
        found = self.candidates(text)
        if found is None or len(found.pairs) < 2:
            return None
        scores = [
            float(self.pair_weights[row] @ np.asarray(vals, dtype=np.float64))
            for row, vals in zip(found.indices, found.values, strict=True)
        ]
        # Row 0 is "none"; every other row is a pair.
        best = 1 + int(np.argmax(scores[1:]))
        pair = found.pairs[best]
        assert pair is not None
        heard, meant = pair
        words = found.view.tokens
        heard_text = bare_value(span_text(text, words, heard))
        meant_text = _number_alone(heard_text, bare_value(span_text(text, words, meant)))
        return Correction(heard=heard_text, meant=meant_text), scores[best] - scores[0]

    def save(self, path: Path) -> None:
        """Write both models as one compressed .npz."""
        np.savez_compressed(
            path,
            span_weights=self.span_weights.astype(np.float32),
            pair_weights=self.pair_weights.astype(np.float32),
            margin=np.float32(self.margin),
        )

    @classmethod
    def load(cls, path: Path) -> CorrectionModel:
        """Read a model written by `save`."""
        with np.load(path, allow_pickle=False) as data:
            return cls(
                data["span_weights"].astype(np.float64),
                data["pair_weights"].astype(np.float64),
                float(data["margin"]),
            )


# The two pair-model features that carry the runs' span scores (fixed slots past the hashes).
_SCORE_HEARD = zlib.crc32(b"score:heard") % DIMENSION
_SCORE_MEANT = zlib.crc32(b"score:meant") % DIMENSION


# --- Training -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelledCorrection:
    """A turn and the misheard and meant words it says (both None when it corrects nothing)."""

    text: str
    heard: str | None
    meant: str | None


def _matches(text: str, tokens: Sequence[Token], span: Span, words: str | None) -> bool:
    return words is not None and span_text(text, tokens, span).lower().strip(" .,") == words.lower()


def _flattened(rows: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Every row's feature indices end to end, and the row each of them belongs to."""
    row_of = np.repeat(np.arange(len(rows)), [len(row) for row in rows])
    return np.concatenate([np.asarray(row) for row in rows]), row_of


def _adam(
    gradient_of: Callable[[np.ndarray], np.ndarray],
    size: tuple[int, ...],
    steps: int,
    learning_rate: float,
    l2: float,
) -> np.ndarray:
    """Weights from zeros by Adam's full-batch steps on the given gradient plus L2."""
    weights = np.zeros(size)
    first, second = np.zeros(size), np.zeros(size)
    for step in range(1, steps + 1):
        adam_step(weights, gradient_of(weights) + l2 * weights, first, second, step, learning_rate)
    return weights


def train_span_weights(
    turns: Sequence[LabelledCorrection], steps: int = 200, l2: float = 1e-4
) -> np.ndarray:
    """The span model: a softmax over misheard/meant/neither for every run of the corrections."""
    rows: list[list[int]] = []
    labels: list[int] = []
    for turn in turns:
        if turn.heard is None:
            continue
        view = _TurnView(turn.text)
        for span in spans_of(turn.text, view.tokens):
            rows.append(_hashed(view.span_features(span)))
            if _matches(turn.text, view.tokens, span, turn.heard):
                labels.append(HEARD)
            elif _matches(turn.text, view.tokens, span, turn.meant):
                labels.append(MEANT)
            else:
                labels.append(NEITHER)
    flat, row_of = _flattened(rows)
    targets = np.zeros((len(rows), 3))
    targets[np.arange(len(rows)), labels] = 1.0
    count = len(rows)

    def gradient(weights: np.ndarray) -> np.ndarray:
        logits = np.stack(
            [np.bincount(row_of, weights[flat, c], minlength=count) for c in range(3)], axis=1
        )
        logits -= logits.max(axis=1, keepdims=True)
        probabilities = np.exp(logits)
        probabilities /= probabilities.sum(axis=1, keepdims=True)
        error = (probabilities - targets) / count
        return np.stack(
            [np.bincount(flat, error[row_of, c], minlength=DIMENSION) for c in range(3)], axis=1
        )

    return _adam(gradient, (DIMENSION, 3), steps, 0.05, l2)


def train_pair_weights(
    turns: Sequence[LabelledCorrection],
    span_weights_for: Sequence[np.ndarray],
    steps: int = 300,
    l2: float = 1e-4,
) -> np.ndarray:
    """The pair model: a softmax over each turn's candidate pairs and "no correction", the
    runs scored by the span model given for that turn (one trained without it)."""
    groups: list[tuple[list[list[int]], list[list[float]], list[bool]]] = []
    for turn, span_weights in zip(turns, span_weights_for, strict=True):
        if not _MAY_CORRECT.search(turn.text):
            continue
        found = CorrectionModel(span_weights, np.zeros(DIMENSION)).candidates(turn.text)
        if found is None:
            continue
        tokens = found.view.tokens
        gold = [
            pair is None
            if turn.heard is None
            else pair is not None
            and _matches(turn.text, tokens, pair[0], turn.heard)
            and _matches(turn.text, tokens, pair[1], turn.meant)
            for pair in found.pairs
        ]
        if not any(gold):
            continue
        groups.append((found.indices, found.values, gold))
    flat, row_of = _flattened([row for indices, _, _ in groups for row in indices])
    flat_values = np.concatenate(
        [np.asarray(row, dtype=np.float64) for _, values, _ in groups for row in values]
    )
    gold_rows = np.concatenate([np.asarray(g, dtype=bool) for _, _, g in groups])
    group_sizes = np.array([len(g) for _, _, g in groups])
    group_of = np.repeat(np.arange(len(groups)), group_sizes)
    starts = np.concatenate([[0], np.cumsum(group_sizes)[:-1]])
    count = len(groups)

    def gradient(weights: np.ndarray) -> np.ndarray:
        scores = np.bincount(row_of, weights[flat] * flat_values, minlength=len(gold_rows))
        scores -= np.maximum.reduceat(scores, starts)[group_of]
        exp = np.exp(scores)
        probabilities = exp / np.add.reduceat(exp, starts)[group_of]
        gold_mass = np.add.reduceat(np.where(gold_rows, probabilities, 0.0), starts)[group_of]
        error = (probabilities - np.where(gold_rows, probabilities / gold_mass, 0.0)) / count
        return np.bincount(flat, error[row_of] * flat_values, minlength=DIMENSION)

    return _adam(gradient, (DIMENSION,), steps, 0.05, l2)


def train_correction_model(turns: Sequence[LabelledCorrection], folds: int = 5) -> CorrectionModel:
    """Both models from labelled turns; the pair model learns from span scores of models that
    did not see the turn (cross-fitted in `folds` folds), so it trusts them as much as they
    deserve on new turns."""
    span_weights = train_span_weights(turns)
    fold_of = [zlib.crc32(turn.text.encode("utf-8")) % folds for turn in turns]
    held_out = [
        train_span_weights([t for t, f in zip(turns, fold_of, strict=True) if f != k])
        for k in range(folds)
    ]
    pair_weights = train_pair_weights(turns, [held_out[f] for f in fold_of])
    return CorrectionModel(span_weights, pair_weights)
