"""Labelled conversations for the memory quality harness (seed 001 §2.12), read from JSON.

A fixture is one user's conversation, replayed step by step through the gateway, with the
labels a person would give each step. The format (fixtures/quality/README.md):

    {"name": "...", "description": "...",
     "facts": {"sister": {"words": ["sister", "marta"]}, ...},
     "steps": [
       {"day": 0, "minute": 0, "session": "s1", "say": "My sister is called Marta.",
        "states": ["sister"]},
       {"day": 1, "session": "s2", "brief": "what should I get my sister?",
        "useful": ["sister"], "needed": ["sister"]},
       {"say": "No, her name is Maria.", "corrects": ["sister"]},
       {"command": "DO_NOT_MENTION", "target": "divorce", "about": ["divorce"]}]}

A fact is matched by words: a bundle item is about a fact when its text holds every one of
the fact's words (case-insensitive). A step is a user turn (`say`, or `assistant` for the
assistant's turn), a `brief`, or a `command`; its time is `day` and `minute` from the
fixture's start (each defaults to the previous step's), its session defaults to the
previous step's. Labels name facts only:

- on a brief: `useful` (an item about it would help this turn), `needed` (missing it would
  cause a repeat question or a mistake; needed facts are useful), `options` (Brief options
  such as {"device_restored": true});
- on a user turn: `states` (the fact is known and settled from here), `conflicts` (the fact
  is unsettled from here: a question about it is legitimate), `corrects` (the user corrects
  the fact), `discomfort` (the user objects to the fact being brought up);
- on a command: `about` (the facts the command is about).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STEP_KINDS = ("say", "assistant", "brief", "command")
LABELS = ("useful", "needed", "states", "conflicts", "corrects", "discomfort", "about")
BRIEF_OPTIONS = frozenset({"device_restored", "user_review_requested", "channel", "mode"})
MINUTE_US = 60 * 1_000_000
DAY_US = 1440 * MINUTE_US
# 2026-01-01T00:00:00Z: fixtures carry offsets, never wall-clock times.
EPOCH_US = 1_767_225_600 * 1_000_000


class FixtureError(ValueError):
    """A fixture that does not follow the format; the message names the step and field."""


@dataclass(frozen=True)
class Fact:
    """Something the user may say about themselves, recognised by its words."""

    name: str
    words: tuple[str, ...]

    def matches(self, text: str) -> bool:
        """Whether a text is about this fact (every word in it, case-insensitive)."""
        lowered = text.lower()
        return all(word in lowered for word in self.words)


@dataclass(frozen=True)
class Step:
    """One step of a conversation: a turn, a brief or a command, with its labels."""

    index: int
    kind: str
    text: str
    session_id: str
    time_us: int
    labels: dict[str, tuple[str, ...]] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    target: str = ""

    def label(self, name: str) -> tuple[str, ...]:
        """The facts the step names under a label (empty when it has none)."""
        return self.labels.get(name, ())


@dataclass(frozen=True)
class Fixture:
    """A labelled conversation of one user."""

    name: str
    description: str
    facts: dict[str, Fact]
    steps: tuple[Step, ...]


def _names(raw: dict[str, Any], key: str, facts: dict[str, Fact], where: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FixtureError(f"{where}.{key}: a list of fact names")
    unknown = sorted(set(value) - set(facts))
    if unknown:
        raise FixtureError(f"{where}.{key}: unknown facts {unknown}")
    return tuple(value)


def _step(index: int, raw: dict[str, Any], facts: dict[str, Fact], previous: Step | None) -> Step:
    where = f"steps[{index}]"
    kinds = [k for k in STEP_KINDS if k in raw]
    if len(kinds) != 1:
        raise FixtureError(f"{where}: exactly one of {list(STEP_KINDS)}")
    unknown = sorted(
        set(raw) - {*STEP_KINDS, *LABELS, "day", "minute", "session", "options", "target"}
    )
    if unknown:
        raise FixtureError(f"{where}: unknown fields {unknown}")
    kind = kinds[0]
    text = raw[kind]
    if not isinstance(text, str) or not text.strip():
        raise FixtureError(f"{where}.{kind}: a non-empty string")
    day = raw.get("day", previous.time_us // DAY_US if previous else 0)
    minute = raw.get("minute", (previous.time_us % DAY_US) // MINUTE_US if previous else 0)
    if not all(isinstance(v, int) and v >= 0 for v in (day, minute)):
        raise FixtureError(f"{where}.day/minute: non-negative integers")
    time_us = day * DAY_US + minute * MINUTE_US
    if previous is not None and time_us < previous.time_us:
        raise FixtureError(f"{where}.minute: steps go forward in time")
    options = raw.get("options", {})
    if not isinstance(options, dict) or set(options) - BRIEF_OPTIONS or kind != "brief" and options:
        raise FixtureError(f"{where}.options: Brief options among {sorted(BRIEF_OPTIONS)}")
    labels = {key: _names(raw, key, facts, where) for key in LABELS if key in raw}
    if "needed" in labels:
        labels["useful"] = tuple(dict.fromkeys((*labels.get("useful", ()), *labels["needed"])))
    return Step(
        index=index,
        kind=kind,
        text=text,
        session_id=str(raw.get("session", previous.session_id if previous else "s1")),
        time_us=time_us,
        labels=labels,
        options=dict(options),
        target=str(raw.get("target", "")),
    )


def parse_fixture(raw: dict[str, Any]) -> Fixture:
    """A fixture from its JSON form; FixtureError names what is wrong."""
    if not isinstance(raw.get("name"), str) or not isinstance(raw.get("steps"), list):
        raise FixtureError("a fixture has a name and a list of steps")
    facts: dict[str, Fact] = {}
    for name, spec in sorted(dict(raw.get("facts", {})).items()):
        words = spec.get("words") if isinstance(spec, dict) else None
        if not words or not all(isinstance(w, str) and w for w in words):
            raise FixtureError(f"facts.{name}.words: a non-empty list of words")
        facts[name] = Fact(name, tuple(w.lower() for w in words))
    steps: list[Step] = []
    for index, step in enumerate(raw["steps"]):
        if not isinstance(step, dict):
            raise FixtureError(f"steps[{index}]: an object")
        steps.append(_step(index, step, facts, steps[-1] if steps else None))
    return Fixture(str(raw["name"]), str(raw.get("description", "")), facts, tuple(steps))


def load_fixture(path: Path) -> Fixture:
    """One fixture file."""
    return parse_fixture(json.loads(path.read_text(encoding="utf-8")))


def load_fixtures(directory: Path) -> list[Fixture]:
    """Every `*.json` fixture of a directory, in name order."""
    return [load_fixture(path) for path in sorted(directory.glob("*.json"))]
