"""An event to write on the Ledger and where it landed, as plain data: domain code builds
these without protobuf, and `memmesh.ledger_writer.LedgerWriter` appends them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EventTime:
    """An attribute value that is a point in time, in microseconds since the epoch."""

    micros: int


# Strings are ids, codes and settings (at most 256 characters), never user content.
AttributeValue = str | int | bool | EventTime


@dataclass(frozen=True)
class NewEvent:
    """One event to append. Its idempotency key makes a retried append write nothing (the
    key with other content is a Conflict); attribute names are lower_snake_case, unique."""

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
