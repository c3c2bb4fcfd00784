"""Per-turn measurement events: counts and codes only, at most 1 KB, write-only."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from memmesh.common.v1 import bundle_pb2
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.quality.measurement import (
    MAX_EVENT_BYTES,
    encode_event,
    measurement_event,
    open_measurement_log,
    read_events,
)

SECRET = "my sister Marta"


def response(reason: str = "", count: int = 3) -> pb.BriefResponse:
    bundle = bundle_pb2.ContextBundle(
        atoms=[bundle_pb2.BundleAtom(atom_id="atm_1", key="relationship.sister", text=SECRET)],
        working_memory=[bundle_pb2.BundleTurn(turn_id="t1", text=SECRET)],
    )
    counters = bundle_pb2.BundleCounters(
        context_bundle_bytes=bundle.ByteSize(), atoms_selected_count=count
    )
    return pb.BriefResponse(bundle=bundle, counters=counters, reason_code=reason)


def test_an_event_holds_counts_and_codes_but_no_text_or_ids() -> None:
    line = encode_event(measurement_event(response()))
    assert b"Marta" not in line and b"atm_1" not in line and b"t1" not in line
    event = json.loads(line)
    assert event["atoms_selected_count"] == 3 and event["working_memory_count"] == 1
    assert event["authoritative"] is False


@given(st.text(max_size=300), st.integers(min_value=0, max_value=2**31 - 1))
def test_any_response_gives_an_event_under_one_kilobyte(reason: str, count: int) -> None:
    event = measurement_event(response(reason, count))
    assert len(encode_event(event)) <= MAX_EVENT_BYTES
    assert event["reason_code"] in ("", "OTHER") or event["reason_code"] == reason


def test_the_log_appends_one_line_per_brief_and_off_writes_nothing(tmp_path: Path) -> None:
    log = open_measurement_log("m/measurement.jsonl", tmp_path)
    log.record(response())
    log.record(response("BUDGET_EXCEEDED"))
    log.close()
    events = read_events(tmp_path / "m" / "measurement.jsonl")
    assert [e["reason_code"] for e in events] == ["", "BUDGET_EXCEEDED"]
    off = open_measurement_log("", tmp_path / "off")
    off.record(response())
    off.close()
    assert not (tmp_path / "off").exists()
