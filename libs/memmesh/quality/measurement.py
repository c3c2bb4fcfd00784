"""Per-turn measurement events (seed 001 §2.12 "Logging for measurement", §2.17 Q17).

After answering a Brief the gateway appends one event to its measurement log: the bundle's
counters and how the turn ended, as counts and codes only. An event names no tenant, user,
session, turn, atom or time and carries no conversation text, so it is aggregate and
non-identifying; it stays under MAX_EVENT_BYTES. The log is write-only: nothing in the mesh
reads it, so measurement can never change memory, permissions or what a Brief answers
(NON-AUTHORITATIVE). A failed write is logged and dropped, never a failed turn.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import IO, Any

from memmesh.gateway.v1 import gateway_service_pb2 as gateway_pb

log = logging.getLogger("memmesh.quality.measurement")

EVENT_KIND = "MEMORY_MEASUREMENT"
EVENT_VERSION = 1
# Seed 001 §2.17 Q17: per-turn measurement log <= 1 KB.
MAX_EVENT_BYTES = 1024
# The seven §2.12 logging fields, as BundleCounters names them.
COUNTER_FIELDS = (
    "context_bundle_bytes",
    "atoms_selected_count",
    "excerpts_selected_count",
    "confirmed_count",
    "tentative_count",
    "conflict_trigger_count",
    "clarification_due_to_memory_count",
    "do_not_mention_hits_count",
)
_CODE = re.compile(r"[A-Z][A-Z0-9_]{0,63}")


def measurement_event(response: gateway_pb.BriefResponse) -> dict[str, Any]:
    """The event of one answered Brief: counts and codes, nothing that names anyone."""
    counters = response.counters
    event: dict[str, Any] = {name: int(getattr(counters, name)) for name in COUNTER_FIELDS}
    code = response.reason_code
    event.update(
        authoritative=False,
        kind=EVENT_KIND,
        version=EVENT_VERSION,
        working_memory_count=len(response.bundle.working_memory),
        degraded=bool(response.degraded),
        degraded_parts_count=len(response.degraded_parts),
        reason_code=code if _CODE.fullmatch(code) else ("OTHER" if code else ""),
    )
    return event


def encode_event(event: dict[str, Any]) -> bytes:
    """One log line: compact JSON with sorted keys, newline-terminated."""
    return (json.dumps(event, sort_keys=True, separators=(",", ":")) + "\n").encode()


class MeasurementLog:
    """An append-only JSON-lines file of measurement events; `None` path means off."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._file: IO[bytes] | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Unbuffered appends: each event is one write(2) of a whole line, so lines of
            # several writers never interleave.
            self._file = open(path, "ab", buffering=0)  # noqa: SIM115 - closed by close()

    def record(self, response: gateway_pb.BriefResponse) -> None:
        """Append the event of an answered Brief; a failure is logged, never raised."""
        if self._file is None:
            return
        line = encode_event(measurement_event(response))
        if len(line) > MAX_EVENT_BYTES:
            log.warning("measurement event dropped: %d bytes", len(line))
            return
        try:
            self._file.write(line)
        except OSError as error:
            log.warning("measurement event not written: %s", error.strerror)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def open_measurement_log(setting: str, data_dir: Path) -> MeasurementLog:
    """The log a setting names: a path (relative ones under the data dir), "" for off."""
    if not setting:
        return MeasurementLog(None)
    path = Path(setting)
    return MeasurementLog(path if path.is_absolute() else data_dir / path)


def read_events(path: Path) -> list[dict[str, Any]]:
    """The events of a log, in order (an absent log has none)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
