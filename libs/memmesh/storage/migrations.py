"""Schema migrations: an ordered list of statements per engine, applied once each."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    """One schema step; `version` orders them and is recorded once applied."""

    version: int
    statements: tuple[str, ...]
