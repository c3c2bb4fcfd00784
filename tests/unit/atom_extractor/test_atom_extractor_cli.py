"""`cli_extract`: one JSON object per input line, fixed shape, deterministic."""

import io
import json

from memmesh.extraction.cli import cli_extract


def _run(lines):
    out = io.StringIO()
    assert cli_extract(io.StringIO("".join(f"{line}\n" for line in lines)), out) == 0
    return out.getvalue().splitlines()


def test_one_output_line_per_input_line_in_order():
    rows = [json.loads(r) for r in _run(["hi there!", "I'm a beekeeper", "Forget that."])]
    assert [r["relevant"] for r in rows] == [False, True, False]
    assert rows[2]["command"] == "FORGET"


def test_irrelevant_line_shape():
    row = json.loads(_run(["how far is Mars"])[0])
    assert row == {"relevant": False, "command": None, "correction": None}


def test_relevant_line_shape_and_float_confidence():
    row = json.loads(_run(["I'm allergic to shellfish"])[0])
    assert list(row) == ["relevant", "facts", "command", "correction"]
    fact = row["facts"][0]
    assert list(fact) == ["text", "category", "confidence", "type", "key"]
    assert fact == {
        "text": "User is allergic to shellfish.",
        "category": "constraint",
        "confidence": 0.95,
        "type": "USER_FACT",
        "key": "constraint.allergy.shellfish",
    }


def test_correction_is_serialised():
    row = json.loads(_run(["no, I said Ines, not Agnes"])[0])
    assert row["command"] == "CORRECTION"
    assert row["correction"] == {"heard": "Agnes", "meant": "Ines"}


def test_output_is_byte_identical_across_runs():
    lines = ["my aunt Greta is a potter", "I'm from Cork, I love rugby", "don't save this"]
    assert _run(lines) == _run(lines)
