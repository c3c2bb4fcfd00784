"""Score the deterministic extractor on a labelled extraction file.

usage: python -m memmesh.bench.eval_extraction [CASES.jsonl] [--failures]
Paths resolve from the current directory (run from the repository root). The last output line
is the scorer's JSON summary plus `targets_met`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from memmesh.extraction.cli import result_to_json
from memmesh.extraction.rules import extract

DEFAULT_CASES = Path("../shared/fixtures/extraction/public.jsonl")
SCORER = Path("../shared/tools/score_extraction.py")
TARGETS = {
    "fact_precision": 0.95,
    "fact_recall": 0.85,
    "rejection_accuracy": 0.97,
    "command_accuracy": 0.95,
}


def main(argv: list[str]) -> int:
    """Run the extractor over every case, score it, print the breakdown and a JSON summary."""
    args = [a for a in argv if not a.startswith("--")]
    cases_path = Path(args[0]) if args else DEFAULT_CASES
    for path, what in ((cases_path, "cases file"), (SCORER, "scorer")):
        if not path.is_file():
            print(
                f"error: {what} not found at {path.resolve()} "
                "(run from the repository root or pass CASES)",
                file=sys.stderr,
            )
            return 2
    with cases_path.open(encoding="utf-8") as cases_file:
        texts = [json.loads(line)["text"] for line in cases_file if line.strip()]
    with tempfile.TemporaryDirectory() as workdir:
        predictions = Path(workdir) / "predictions.jsonl"
        with predictions.open("w", encoding="utf-8") as out:
            for text in texts:
                out.write(json.dumps(result_to_json(extract(text))) + "\n")
        flags = ["--by-class"] + (["--failures"] if "--failures" in argv else [])
        completed = subprocess.run(
            [sys.executable, str(SCORER), str(cases_path), str(predictions), *flags],
            capture_output=True,
            text=True,
            check=False,
        )
    if completed.returncode != 0:
        print(completed.stdout + completed.stderr, file=sys.stderr)
        return completed.returncode
    lines = completed.stdout.strip().splitlines()
    summary = json.loads(lines[-1])
    for line in lines[:-1]:
        print(line)
    summary["targets_met"] = all(
        (summary.get(name) or 0) >= minimum for name, minimum in TARGETS.items()
    )
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
