"""`make proof`: the completion ledger of the memory-track acceptance ids (seed 001 §2.15-2.17).

The ids (AT_Q12_MEM_... through AT_Q18_MEM_...) and their gates are read from the seed's
own text, so the ledger cannot drift from it. The acceptance suites run under pytest with a
JUnit XML report; each test whose function is named after an id (`test_at_q14_mem_reask_guards`
or `test_at_q14_mem_reask_guards_<more>`) proves that id. An id is `pass` when it has tests
and all of them passed, `fail` when any failed, and `unproven` when it has no test or its
tests were all skipped. Rows are sorted by id, then test node id; rows of an id without a
test name no test. The ledger is written as Markdown and as its JSON twin.
"""

from __future__ import annotations

import argparse
import glob
import json
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

DEFAULT_SPEC_GLOB = "../shared/seeds/001_*.txt"
DEFAULT_OUT = Path("proof")
SUITES = ("tests/acceptance",)
_GATE = re.compile(r"^### (Q\d+)\s*[—-]+\s*(.+?)\s*(?:\(Defined\))?\s*$", re.MULTILINE)
_ID = re.compile(r"^- (AT_(Q\d+)_MEM_[A-Z0-9_]+)\s*$", re.MULTILINE)
PASS, FAIL, UNPROVEN = "pass", "fail", "unproven"


@dataclass(frozen=True, order=True)
class AcceptanceId:
    """One acceptance id of the seed, with its gate (`Q12-MEM`) and the gate's title."""

    acceptance_id: str
    gate: str
    gate_title: str

    @property
    def behaviour(self) -> str:
        """The gate's title and what the id names, in words."""
        suffix = self.acceptance_id.split("_MEM_", 1)[1].lower().replace("_", " ")
        return f"{self.gate_title}: {suffix}"

    @property
    def test_prefix(self) -> str:
        return "test_" + self.acceptance_id.lower()


@dataclass(frozen=True, order=True)
class LedgerRow:
    """One row: an id and one test proving it (or none), with the test's outcome."""

    acceptance_id: str
    gate: str
    behaviour: str
    test: str
    status: str
    commit: str
    date: str


def acceptance_ids(spec_text: str) -> list[AcceptanceId]:
    """The memory-track acceptance ids in the seed text, each under its gate heading."""
    titles = {m.group(1): m.group(2) for m in _GATE.finditer(spec_text)}
    found = {
        AcceptanceId(m.group(1), f"{m.group(2)}-MEM", titles.get(m.group(2), m.group(2)))
        for m in _ID.finditer(spec_text)
    }
    return sorted(found)


def junit_outcomes(xml_text: str) -> dict[str, str]:
    """Test node id -> passed / failed / skipped, from a pytest JUnit XML report."""
    outcomes: dict[str, str] = {}
    for case in ElementTree.fromstring(xml_text).iter("testcase"):
        module = case.get("classname", "")
        node = f"{module.replace('.', '/')}.py::{case.get('name', '')}"
        if case.find("failure") is not None or case.find("error") is not None:
            outcomes[node] = "failed"
        elif case.find("skipped") is not None:
            outcomes.setdefault(node, "skipped")
        else:
            outcomes.setdefault(node, "passed")
    return outcomes


def proving_id(node: str, ids: Sequence[AcceptanceId]) -> AcceptanceId | None:
    """The id a test node is named after (the longest that fits), if any."""
    function = node.rsplit("::", 1)[-1].split("[", 1)[0]
    fitting = [
        i for i in ids if function == i.test_prefix or function.startswith(i.test_prefix + "_")
    ]
    return max(fitting, key=lambda i: len(i.acceptance_id), default=None)


def ledger_rows(
    ids: Sequence[AcceptanceId], outcomes: dict[str, str], commit: str, date: str
) -> list[LedgerRow]:
    """Every id with each of its tests and their outcomes; an id without a test is unproven."""
    tests: dict[str, list[str]] = {i.acceptance_id: [] for i in ids}
    for node in outcomes:
        owner = proving_id(node, ids)
        if owner is not None:
            tests[owner.acceptance_id].append(node)
    status = {"passed": PASS, "failed": FAIL, "skipped": UNPROVEN}
    rows = []
    for i in ids:
        for node in tests[i.acceptance_id] or [""]:
            outcome = status[outcomes[node]] if node else UNPROVEN
            rows.append(
                LedgerRow(i.acceptance_id, i.gate, i.behaviour, node, outcome, commit, date)
            )
    return sorted(rows)


def id_status(rows: Sequence[LedgerRow]) -> dict[str, str]:
    """Per id: fail if any test failed, pass if every test passed, else unproven."""
    verdicts: dict[str, set[str]] = {}
    for row in rows:
        verdicts.setdefault(row.acceptance_id, set()).add(row.status)
    return {
        i: FAIL if FAIL in v else PASS if v == {PASS} else UNPROVEN
        for i, v in sorted(verdicts.items())
    }


def render_markdown(rows: Sequence[LedgerRow], source: str, commit: str, date: str) -> str:
    """The ledger as a reviewable Markdown page: a summary per id, then every test row."""
    statuses = id_status(rows)
    behaviours = {r.acceptance_id: (r.gate, r.behaviour) for r in rows}
    counts = {s: sum(v == s for v in statuses.values()) for s in (PASS, FAIL, UNPROVEN)}
    lines = [
        "# Memory-track completion ledger (Q12-MEM to Q18-MEM)",
        "",
        f"Acceptance ids from `{source}` (seed 001 §2.17); written by `make proof` at commit",
        f"`{commit}` on {date}. An id without a passing test is unproven.",
        "",
        f"{counts[PASS]} pass, {counts[FAIL]} fail, {counts[UNPROVEN]} unproven of {len(statuses)}.",
        "",
        "| acceptance id | gate | behaviour | status |",
        "| --- | --- | --- | --- |",
    ]
    for acceptance_id, status in statuses.items():
        gate, behaviour = behaviours[acceptance_id]
        lines.append(f"| {acceptance_id} | {gate} | {behaviour} | {status} |")
    lines += ["", "## Tests", "", "| acceptance id | test | status |", "| --- | --- | --- |"]
    for row in rows:
        lines.append(f"| {row.acceptance_id} | `{row.test or '(none)'}` | {row.status} |")
    return "\n".join(lines) + "\n"


def render_json(rows: Sequence[LedgerRow], source: str, commit: str, date: str) -> str:
    """The ledger's JSON twin: the same rows, keys sorted."""
    document = {
        "source": source,
        "commit": commit,
        "date": date,
        "status": id_status(rows),
        "rows": [asdict(row) for row in rows],
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def current_commit() -> str:
    """HEAD, marked `+dirty` when tracked files differ from it."""
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return head + ("+dirty" if dirty else "")


def run_suites(junit_path: Path, extra: Sequence[str]) -> int:
    """Run the acceptance suites with a JUnit XML report; pytest's exit code."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += [*extra, f"--junit-xml={junit_path}", *SUITES]
    return subprocess.run(command, check=False).returncode


def spec_file(pattern: str) -> Path:
    """The one seed file the pattern names."""
    matches = sorted(glob.glob(pattern))
    if len(matches) != 1:
        raise SystemExit(f"expected one seed file for {pattern}, found {len(matches)}")
    return Path(matches[0])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the memory-track completion ledger.")
    parser.add_argument("--spec", default=DEFAULT_SPEC_GLOB, help="seed 001 (a glob)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--junit", type=Path, help="use this report instead of running pytest")
    parser.add_argument("--pytest-args", default="-n 2 --dist loadfile")
    args = parser.parse_args(argv)
    spec = spec_file(args.spec)
    ids = acceptance_ids(spec.read_text(encoding="utf-8"))
    if not ids:
        raise SystemExit(f"no acceptance ids in {spec}")
    with tempfile.TemporaryDirectory() as scratch:
        junit = args.junit or Path(scratch) / "acceptance.xml"
        if args.junit is None:
            run_suites(junit, args.pytest_args.split())
        outcomes = junit_outcomes(junit.read_text(encoding="utf-8"))
    commit = current_commit()
    date = datetime.now(UTC).date().isoformat()
    rows = ledger_rows(ids, outcomes, commit, date)
    source = f"seeds/{spec.name}"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ledger.md").write_text(render_markdown(rows, source, commit, date))
    (args.out / "ledger.json").write_text(render_json(rows, source, commit, date))
    statuses = id_status(rows)
    print(
        f"wrote {args.out}/ledger.md and ledger.json: "
        + json.dumps({s: sum(v == s for v in statuses.values()) for s in (PASS, FAIL, UNPROVEN)})
    )
    return 1 if FAIL in statuses.values() else 0


if __name__ == "__main__":
    raise SystemExit(main())
