"""An event to write on the Ledger and where it landed, as plain data: domain code builds
these without protobuf, and `memmesh.ledger_writer.LedgerWriter` appends them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EventTime:
    """An attribute value that is a point in time, in microseconds since the epoch."""

    micros: int


@dataclass(frozen=True)
class Linkable:
    """User content an event must stay linkable by (an atom key, a command's target), never
    stored as such: the writer stores HMAC-SHA256 of it under the user's subject key, so
    equal content gives equal values while the key lives, and nothing once it is shredded.
    Callers normalise the text (e.g. strip and lower-case) so equal content is equal."""

    text: str

    def __repr__(self) -> str:  # the content never reaches a log line
        return "Linkable(<redacted>)"


@dataclass(frozen=True)
class Sealed:
    """User content its owner must read back from the stream (a profile field a fold
    replays): the writer stores it encrypted (AES-SIV) under the user's subject key, and
    only a holder of that key opens it; after a shred nobody can."""

    text: str

    def __repr__(self) -> str:
        return "Sealed(<redacted>)"


# Plain strings are ids, codes and settings (at most 256 characters), never user content:
# content goes in as Linkable or Sealed.
AttributeValue = str | int | bool | EventTime | Linkable | Sealed


@dataclass(frozen=True)
class NewEvent:
    """One event to append. Its idempotency key makes a retried append write nothing (the
    key with other content is a Conflict); the writer stores only an HMAC of it under the
    user's subject key. Attribute names are lower_snake_case, unique."""

    idempotency_key: str
    event_type: str
    reason_code: str
    attributes: tuple[tuple[str, AttributeValue], ...]
    occur_time_us: int


@dataclass(frozen=True)
class Appended:
    """Where an event landed; `duplicate` when its key was already stored (nothing written)."""

    sequence: int
    duplicate: bool
