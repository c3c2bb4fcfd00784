"""CPU time and resident memory of processes (Linux /proc), to report CPU per request and
memory per engine."""

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


def rss_bytes(pid: int) -> int:
    """Resident memory of a process, 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
