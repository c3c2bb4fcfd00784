"""CPU time spent by a set of processes (Linux /proc), to report CPU per request."""

from __future__ import annotations

import os
from collections.abc import Iterable

_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: Iterable[int]) -> float:
    """User plus system CPU seconds consumed so far by the processes (gone ones count 0)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                # Fields after the parenthesised command name; utime and stime are the 12th and 13th.
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / _TICKS_PER_S
