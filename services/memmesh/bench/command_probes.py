"""Command accuracy on the command probes (fixtures/extraction/command_probes/*.tsv).

usage: python -m memmesh.bench.command_probes [PROBES.tsv ...]
Each line is `COMMAND<TAB>text` (NONE for speech that gives no command). Prints, per file,
how many turns the extractor hears as the labelled command, and each miss.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from memmesh.extraction import extract

PROBES = Path("fixtures/extraction/command_probes")


def score(path: Path) -> tuple[int, list[str]]:
    """Turns heard as their labelled command, and a line per miss."""
    right, misses = 0, []
    for line in path.read_text().splitlines():
        wanted, text = line.split("\t")
        command = extract(text).command
        heard = command.value if command else "NONE"
        if heard == wanted:
            right += 1
        else:
            misses.append(f"  wanted {wanted:<20} heard {heard:<20} {text}")
    return right, misses


def main(argv: Sequence[str]) -> None:
    for path in [Path(arg) for arg in argv] or sorted(PROBES.glob("*.tsv")):
        right, misses = score(path)
        total = right + len(misses)
        print(f"{path.name}: {right}/{total} = {right / total:.3f}")
        print("\n".join(misses))


if __name__ == "__main__":
    main(sys.argv[1:])
