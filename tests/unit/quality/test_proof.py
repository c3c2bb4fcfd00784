"""The completion ledger: ids read from the seed text, tests mapped to them, rows rendered."""

from __future__ import annotations

import json

from memmesh.quality.proof import (
    FAIL,
    PASS,
    UNPROVEN,
    acceptance_ids,
    id_status,
    junit_outcomes,
    ledger_rows,
    render_json,
    render_markdown,
)

SPEC = """\
### Q14 — Redundancy Prevention + Do‑Not‑Repeat (Defined)

Acceptance test stubs:

- AT_Q14_MEM_DO_NOT_REPEAT
- AT_Q14_MEM_UNRESOLVED_SUPPRESS

### Q18 — Emotional Continuity Boundaries (Defined)

- AT_Q18_MEM_EMO_TONE_ONLY
- AT_Q18_MEM_EMO_NO_FACTS
"""
JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.acceptance.test_q14_redundancy" name="test_at_q14_mem_do_not_repeat" time="1"/>
<testcase classname="tests.acceptance.test_q14_redundancy" name="test_at_q14_mem_unresolved_suppress_same_question" time="1"/>
<testcase classname="tests.acceptance.test_q14_redundancy" name="test_at_q14_mem_unresolved_suppress" time="1"><failure message="x"/></testcase>
<testcase classname="tests.acceptance.test_q18" name="test_at_q18_mem_emo_no_facts[voice]" time="1"><skipped message="y"/></testcase>
<testcase classname="tests.acceptance.test_other" name="test_unrelated" time="1"/>
</testsuite></testsuites>
"""


def test_ids_and_gates_are_read_from_the_seed_text() -> None:
    ids = acceptance_ids(SPEC)
    assert [(i.acceptance_id, i.gate) for i in ids] == [
        ("AT_Q14_MEM_DO_NOT_REPEAT", "Q14-MEM"),
        ("AT_Q14_MEM_UNRESOLVED_SUPPRESS", "Q14-MEM"),
        ("AT_Q18_MEM_EMO_NO_FACTS", "Q18-MEM"),
        ("AT_Q18_MEM_EMO_TONE_ONLY", "Q18-MEM"),
    ]
    assert ids[0].behaviour == "Redundancy Prevention + Do‑Not‑Repeat: do not repeat"


def test_tests_map_to_ids_by_name_and_an_id_without_a_passing_test_is_unproven() -> None:
    rows = ledger_rows(acceptance_ids(SPEC), junit_outcomes(JUNIT), "abc123", "2026-01-01")
    assert [(r.acceptance_id, r.test, r.status) for r in rows] == [
        (
            "AT_Q14_MEM_DO_NOT_REPEAT",
            "tests/acceptance/test_q14_redundancy.py::test_at_q14_mem_do_not_repeat",
            PASS,
        ),
        (
            "AT_Q14_MEM_UNRESOLVED_SUPPRESS",
            "tests/acceptance/test_q14_redundancy.py::test_at_q14_mem_unresolved_suppress",
            FAIL,
        ),
        (
            "AT_Q14_MEM_UNRESOLVED_SUPPRESS",
            "tests/acceptance/test_q14_redundancy.py::test_at_q14_mem_unresolved_suppress_same_question",
            PASS,
        ),
        (
            "AT_Q18_MEM_EMO_NO_FACTS",
            "tests/acceptance/test_q18.py::test_at_q18_mem_emo_no_facts[voice]",
            UNPROVEN,
        ),
        ("AT_Q18_MEM_EMO_TONE_ONLY", "", UNPROVEN),
    ]
    assert id_status(rows) == {
        "AT_Q14_MEM_DO_NOT_REPEAT": PASS,
        "AT_Q14_MEM_UNRESOLVED_SUPPRESS": FAIL,
        "AT_Q18_MEM_EMO_NO_FACTS": UNPROVEN,
        "AT_Q18_MEM_EMO_TONE_ONLY": UNPROVEN,
    }
    assert {r.commit for r in rows} == {"abc123"} and {r.date for r in rows} == {"2026-01-01"}


def test_rendering_is_sorted_and_stable_and_the_twins_agree() -> None:
    outcomes = junit_outcomes(JUNIT)
    ids = acceptance_ids(SPEC)
    rows = ledger_rows(ids, outcomes, "abc123", "2026-01-01")
    shuffled = ledger_rows(
        list(reversed(ids)), dict(reversed(list(outcomes.items()))), "abc123", "2026-01-01"
    )
    markdown = render_markdown(rows, "seeds/001.txt", "abc123", "2026-01-01")
    assert markdown == render_markdown(shuffled, "seeds/001.txt", "abc123", "2026-01-01")
    assert "1 pass, 1 fail, 2 unproven of 4." in markdown
    assert "| AT_Q18_MEM_EMO_TONE_ONLY | `(none)` | unproven |" in markdown
    twin = json.loads(render_json(rows, "seeds/001.txt", "abc123", "2026-01-01"))
    assert [r["acceptance_id"] for r in twin["rows"]] == [r.acceptance_id for r in rows]
    assert twin["status"]["AT_Q18_MEM_EMO_TONE_ONLY"] == UNPROVEN
