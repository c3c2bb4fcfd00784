"""Score the extractors on the public file and on the project's dev and test splits.

usage: python -m memmesh.bench.eval_extraction [CASES.jsonl ...] [--design NAME] [--failures]
With no CASES it scores ../shared/fixtures/extraction/public.jsonl and
fixtures/extraction/{dev,test}.jsonl. Designs: `rules` (the rules alone) and `hybrid` (the
rules plus the learned clause and command heads over the sentence encoder and the learned
correction model; the default path). Paths resolve
from the current directory (run from the repository root). The last output line is a JSON
object with every figure and `targets_met` (the hybrid design on the test split).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from memmesh.extraction.cli import result_to_json
from memmesh.extraction.model import ExtractionResult

PUBLIC_CASES = Path("../shared/fixtures/extraction/public.jsonl")
SPLITS = (Path("fixtures/extraction/dev.jsonl"), Path("fixtures/extraction/test.jsonl"))
SCORER = Path("../shared/tools/score_extraction.py")
DESIGNS = ("rules", "hybrid")
TARGETS = {
    "fact_precision": 0.95,
    "fact_recall": 0.90,
    "rejection_accuracy": 0.98,
    "command_accuracy": 0.95,
    "correction_accuracy": 0.90,
}
FIGURES = (
    "fact_precision",
    "fact_recall",
    "rejection_accuracy",
    "command_accuracy",
    "correction_accuracy",
    "cases_fully_right",
)


def extractor_for(design: str) -> Callable[[str], ExtractionResult]:
    """The extract function of a design."""
    if design == "rules":
        from memmesh.extraction.rules import extract

        return extract
    if design == "hybrid":
        from memmesh.extraction.learned import default_hybrid_extractor

        return default_hybrid_extractor().extract
    raise ValueError(f"unknown design {design!r}; choose from {', '.join(DESIGNS)}")


def score_file(
    cases_path: Path, extract: Callable[[str], ExtractionResult], flags: list[str]
) -> tuple[dict[str, object], list[str]]:
    """Run one extractor over a cases file; the scorer's summary and its other output lines."""
    with cases_path.open(encoding="utf-8") as cases_file:
        texts = [json.loads(line)["text"] for line in cases_file if line.strip()]
    with tempfile.TemporaryDirectory() as workdir:
        predictions = Path(workdir) / "predictions.jsonl"
        with predictions.open("w", encoding="utf-8") as out:
            for text in texts:
                out.write(json.dumps(result_to_json(extract(text))) + "\n")
        completed = subprocess.run(
            [sys.executable, str(SCORER), str(cases_path), str(predictions), *flags],
            capture_output=True,
            text=True,
            check=False,
        )
    if completed.returncode != 0:
        raise RuntimeError(completed.stdout + completed.stderr)
    lines = completed.stdout.strip().splitlines()
    return json.loads(lines[-1]), lines[:-1]


def main(argv: list[str]) -> int:
    """Score every requested design on every cases file; print a table and a JSON summary."""
    args = [a for a in argv if not a.startswith("--")]
    designs = list(DESIGNS)
    if "--design" in argv:
        chosen = argv[argv.index("--design") + 1]
        designs = [chosen]
        args = [a for a in args if a != chosen]
    files = [Path(a) for a in args] or [PUBLIC_CASES, *SPLITS]
    missing = [p for p in (*files, SCORER) if not p.is_file()]
    if missing:
        print(
            f"error: not found: {', '.join(str(p.resolve()) for p in missing)} "
            "(run from the repository root or pass CASES)",
            file=sys.stderr,
        )
        return 2
    flags = ["--by-class"] + (["--failures"] if "--failures" in argv else [])
    results: dict[str, dict[str, object]] = {}
    print(f"{'design':8s} {'cases':40s} " + " ".join(f"{f[:10]:>10s}" for f in FIGURES))
    for design in designs:
        extract = extractor_for(design)
        for path in files:
            summary, detail = score_file(path, extract, flags)
            if "--failures" in argv or "--by-class" in argv and len(files) == 1:
                print("\n".join(detail))
            results[f"{design}:{path.name}"] = summary
            row = " ".join(f"{_figure(summary.get(f)):>10s}" for f in FIGURES)
            print(f"{design:8s} {str(path):40s} {row}")
    judged = results.get(f"hybrid:{SPLITS[1].name}")
    report: dict[str, object] = {"results": results}
    if judged is not None:
        report["targets_met"] = all(
            isinstance(judged.get(name), float | int) and judged[name] >= minimum  # type: ignore[operator]
            for name, minimum in TARGETS.items()
        )
    print(json.dumps(report))
    return 0


def _figure(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float | int) else "-"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
