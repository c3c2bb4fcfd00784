"""What a parsed reply must also be before it is used (seed 004): grounded in the input
(evidence that exists, no names or numbers the input does not have, content words the cited
turns say), not degenerate (empty, repeated, not condensed, copied verbatim)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memmesh.extraction.semantic.parsing import DegenerateOutput
from memmesh.observation.model import Observation
from memmesh.observation.rewrite import content_stems
from memmesh.observation.schema import ObserverReply, ReflectorReply
from memmesh.text import fold, sentences, stem, words

# Words any observation may use to tell what the user did, said nothing of in the turns.
_FRAMING = frozenset(
    stem(word)
    for word in """user assistant decided decide wants want plans plan prefers prefer asked ask
    unsure sure whether mentioned said says chose choose needs need likes like considering
    interested thinks feels told shared noted going currently open question next step still
    left discussed planning agreed""".split()
)
# Share of an observation's content words the cited turns must say.
MIN_GROUNDED_SHARE = 0.6
# A summary made of sentences copied from its input: this share of its characters or more.
MAX_VERBATIM_SHARE = 0.6
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n)$")


class UngroundedOutput(ValueError):
    """The reply says what the input does not: a turn it lacks, a name or a number."""


def _vocabulary(text: str) -> frozenset[str]:
    """The folded words of a text, possessive 's dropped."""
    return frozenset(fold(word).removesuffix("'s") for word in words(text))


def _named(text: str) -> list[str]:
    """Names and numbers of a text: capitalised words inside a sentence, and numbers."""
    found = []
    for match in re.finditer(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.,:]\d+)*", text):
        token = match.group()
        inside = not _SENTENCE_START.search(text[: match.start()])
        if token[0].isdigit() or (inside and token[0].isupper() and token not in ("I", "User")):
            found.append(fold(token).removesuffix("'s"))
    return found


def _unsupported_names(text: str, source: str) -> list[str]:
    known = _vocabulary(source)
    return [name for name in _named(text) if name not in known]


def validate_observations(
    reply: ObserverReply, turn_texts: Mapping[str, str]
) -> tuple[Observation, ...]:
    """The reply's observations, checked against the turns (id -> text as sent); raise
    DegenerateOutput or UngroundedOutput naming the first problems."""
    if not reply.observations:
        raise DegenerateOutput("observations: empty; the conversation has content to observe")
    seen: dict[str, int] = {}
    problems: list[str] = []
    for index, item in enumerate(reply.observations):
        folded = " ".join(fold(item.text).split())
        if folded in seen:
            raise DegenerateOutput(f"observations.{index} repeats observations.{seen[folded]}")
        seen[folded] = index
        missing = [turn_id for turn_id in item.turn_ids if turn_id not in turn_texts]
        if missing:
            problems.append(f"observations.{index} cites turn {missing[0]!r}, not in the input")
            continue
        cited = " ".join(turn_texts[turn_id] for turn_id in item.turn_ids)
        if names := _unsupported_names(item.text, cited):
            problems.append(
                f"observations.{index} says {names[0]!r}, which the cited turns do not say"
            )
            continue
        said = content_stems(item.text) - _FRAMING
        if not said:
            raise DegenerateOutput(f"observations.{index} says nothing but framing words")
        share = len(said & content_stems(cited)) / len(said)
        if share < MIN_GROUNDED_SHARE:
            problems.append(f"observations.{index}: most of its words are not in the cited turns")
    if problems:
        raise UngroundedOutput("; ".join(problems[:3]))
    return tuple(
        Observation(item.text.strip(), item.kind, tuple(item.turn_ids))
        for item in reply.observations
        if "[REDACTED" not in item.text
    )


def _repeats(lines: Sequence[str]) -> bool:
    folded = [" ".join(fold(line).split()) for line in lines if line.strip()]
    return len(set(folded)) != len(folded)


def validate_reflection(reply: ReflectorReply, source: str, source_lines: Sequence[str]) -> None:
    """Check a reflection against its input text (all of it, and its lines one by one);
    raise DegenerateOutput or UngroundedOutput naming the problem."""
    summary = " ".join(reply.summary.split())
    bullets = [" ".join(b.split()) for b in reply.left_off]
    if not summary or not all(bullets):
        raise DegenerateOutput("summary and every left_off bullet must have words")
    if _repeats(bullets) or _repeats(sentences(summary)):
        raise DegenerateOutput("summary or left_off repeats itself")
    if len(summary) >= len(source):
        raise DegenerateOutput(
            f"summary has {len(summary)} characters, not shorter than its input ({len(source)})"
        )
    folded_lines = [" ".join(fold(line).split()) for line in source_lines]
    copied = sum(
        len(s)
        for s in sentences(summary)
        if any(" ".join(fold(s).rstrip(".").split()) in line for line in folded_lines)
    )
    if len(sentences(summary)) > 1 and copied >= MAX_VERBATIM_SHARE * len(summary):
        raise DegenerateOutput("summary copies the observations verbatim instead of condensing")
    for field, text in (
        ("summary", summary),
        *((f"left_off.{i}", b) for i, b in enumerate(bullets)),
    ):
        if names := _unsupported_names(text, source):
            raise UngroundedOutput(f"{field} says {names[0]!r}, which the input does not say")
