"""Conversions between protobuf Timestamps and integer microseconds since the epoch."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp


def micros_of(timestamp: Timestamp) -> int:
    """Microseconds since the epoch (integers keep time arithmetic exact and deterministic)."""
    return timestamp.seconds * 1_000_000 + timestamp.nanos // 1_000


def timestamp_of(micros: int) -> Timestamp:
    """A Timestamp from microseconds since the epoch."""
    seconds, rest = divmod(micros, 1_000_000)
    return Timestamp(seconds=seconds, nanos=rest * 1_000)
