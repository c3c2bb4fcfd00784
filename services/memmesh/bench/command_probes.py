"""Command accuracy on the command probes (fixtures/extraction/command_probes/*.tsv).

usage: python -m memmesh.bench.command_probes [--rules] [PROBES.tsv ...]
Each line is `COMMAND<TAB>text` (NONE for speech that gives no command). Prints, per file,
how many turns the default extractor (the rules, then the learned command head) hears as the
labelled command, and each miss; `--rules` scores the command rules alone. Rounds 1-4 train
the command head, so its figures on them are not held out.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from memmesh.extraction import ExtractionResult, extract
from memmesh.extraction.learned import default_hybrid_extractor

PROBES = Path("fixtures/extraction/command_probes")


def score(path: Path, read: Callable[[str], ExtractionResult] = extract) -> tuple[int, list[str]]:
    """Turns heard as their labelled command, and a line per miss."""
    right, misses = 0, []
    for line in path.read_text().splitlines():
        wanted, text = line.split("\t")
        command = read(text).command
        heard = command.value if command else "NONE"
        if heard == wanted:
            right += 1
        else:
            misses.append(f"  wanted {wanted:<20} heard {heard:<20} {text}")
    return right, misses


def main(argv: Sequence[str]) -> None:
    read = extract if "--rules" in argv else default_hybrid_extractor().extract
    paths = [Path(arg) for arg in argv if arg != "--rules"]
    for path in paths or sorted(PROBES.glob("*.tsv")):
        right, misses = score(path, read)
        total = right + len(misses)
        print(f"{path.name}: {right}/{total} = {right / total:.3f}")
        print("\n".join(misses))


if __name__ == "__main__":
    main(sys.argv[1:])
