"""Exposure rules: what they are, how their targets are normalised, how they sort."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum, StrEnum

from memmesh.errors import FieldViolation, InvalidInput


class RuleKind(StrEnum):
    DO_NOT_MENTION = "DO_NOT_MENTION"
    DO_NOT_STORE = "DO_NOT_STORE"
    PULL_ONLY = "PULL_ONLY"


class TargetType(IntEnum):
    """Numbered as in the proto, so that rules sort the same everywhere."""

    KEY = 1
    TOPIC = 2
    THREAD = 3
    WORK_ORDER = 4
    ATOM = 5


class Channel(StrEnum):
    VOICE = "VOICE"
    TEXT = "TEXT"


@dataclass(frozen=True, order=True)
class RuleId:
    """What makes a rule unique for a user; also its sort order (kind, target type, target)."""

    kind: RuleKind
    target_type: TargetType
    target: str


@dataclass(frozen=True)
class Rule:
    """A stored rule and when it was set (µs). A DO_NOT_MENTION rule also covers its subject's
    terms: the names and aliases of the atoms it matched and of their linked graph nodes,
    folded, sorted (memmesh.engines.exposure_guard.domain.subject)."""

    id: RuleId
    create_time_us: int
    terms: tuple[str, ...] = ()


_KEY = re.compile(r"[^\s.]+(?:\.[^\s.]+)*")
_WORD = re.compile(r"\w+")


def normalize_target(target_type: TargetType, raw: str, path: str = "rule.target") -> str:
    """The canonical form rules are stored and matched in; InvalidInput naming path when unusable.
    Keys and topics compare case-insensitively (a rule must never miss on case); ids are exact."""
    text = raw.strip()
    match target_type:
        case TargetType.KEY:
            key = text.casefold()
            if not _KEY.fullmatch(key):
                raise InvalidInput(
                    [FieldViolation(path, "must be dotted key segments without spaces")]
                )
            return key
        case TargetType.TOPIC:
            topic = " ".join(text.casefold().split())
            if not _WORD.search(topic):
                raise InvalidInput([FieldViolation(path, "must contain a word")])
            return topic
        case _:
            if not text or any(c.isspace() for c in text):
                raise InvalidInput([FieldViolation(path, "must be an id without spaces")])
            return text


def rule_id(
    kind: RuleKind, target_type: TargetType, raw_target: str, path: str = "rule.target"
) -> RuleId:
    """A rule id with its target normalised."""
    return RuleId(kind, target_type, normalize_target(target_type, raw_target, path))
