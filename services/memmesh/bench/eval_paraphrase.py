"""`make eval-paraphrase`: requests that mean a fact without saying its words, through the
gateway of a real mesh (SQLite).

Each user of `fixtures/retrieval/paraphrase-{dev,test}.json` says each fact in a session of
its own, a day apart, the assistant answering; the day after the last, every request is a
Brief in a new session, so only retrieval (atoms, excerpts, digests) can bring a fact. A
request is found when its fact's marker word is in an item of the bundle; the other facts'
markers in the same bundle are counted too (what came that the request was not about). The
dev file is read while changing retrieval, the test file only measured.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memmesh.bench import turns
from memmesh.client.gateway import GatewayClient
from memmesh.gateway.v1 import gateway_service_pb2 as gateway_pb

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "retrieval"
SPLITS = ("dev", "test")
DAY_US = 86_400_000_000
NOW_US = turns.START_US + 60 * DAY_US
ACKNOWLEDGEMENT = "Got it, thanks for telling me."


@dataclass
class Tally:
    """Requests found, other facts brought, and degraded Briefs, over one split."""

    found: int = 0
    requests: int = 0
    others: int = 0
    degraded: int = 0

    def figures(self) -> dict[str, float]:
        return {
            "found": self.found,
            "requests": self.requests,
            "found_share": round(self.found / max(self.requests, 1), 4),
            "other_facts_per_brief": round(self.others / max(self.requests, 1), 2),
            "degraded": self.degraded,
        }


def bundle_text(response: gateway_pb.BriefResponse) -> str:
    """The text of every item the bundle brings from memory, lower-cased."""
    bundle = response.bundle
    return "\n".join(
        [atom.text for atom in bundle.atoms]
        + [turn.text for turn in bundle.excerpts]
        + [f"{digest.title}\n{digest.summary}" for digest in bundle.digests]
    ).lower()


def holds(text: str, marker: str) -> bool:
    """Whether the text holds the marker as a whole word."""
    return re.search(rf"(?<!\w){re.escape(marker.lower())}(?!\w)", text) is not None


async def _user(
    gateway: GatewayClient, user_id: str, user: dict[str, Any], tally: Tally, misses: list[str]
) -> None:
    facts = user["facts"]
    for day, fact in enumerate(facts):
        said_us = NOW_US - (len(facts) - day) * DAY_US
        session = f"day-{day}"
        await gateway.ingest(user_id, session, f"t{day}", "user", fact["text"], said_us)
        await gateway.ingest(
            user_id, session, f"t{day}-reply", "assistant", ACKNOWLEDGEMENT, said_us + 30_000_000
        )
    for number, request in enumerate(user["requests"]):
        response = await gateway.brief(user_id, f"ask-{number}", NOW_US, request["text"])
        text = bundle_text(response)
        found = holds(text, request["marker"])
        tally.requests += 1
        tally.found += found
        tally.others += sum(
            holds(text, f["marker"]) for f in facts if f["marker"] != request["marker"]
        )
        tally.degraded += response.degraded
        if not found:
            misses.append(f"{user_id}: {request['text']!r} -> {request['marker']}")


async def evaluate(
    splits: tuple[str, ...] = SPLITS,
) -> tuple[dict[str, dict[str, float]], list[str]]:
    """The figures of each split, and the dev split's misses."""
    figures: dict[str, dict[str, float]] = {}
    misses: list[str] = []
    with tempfile.TemporaryDirectory() as data_dir:
        mesh = turns.gateway_mesh(data_dir, "sqlite", None)
        mesh.start()
        try:
            async with turns.gateway_client(mesh.addrs["gateway"]) as gateway:
                for split in splits:
                    data = json.loads((FIXTURES / f"paraphrase-{split}.json").read_text())
                    tally = Tally()
                    for number, user in enumerate(data["users"]):
                        await _user(
                            gateway,
                            f"{split}-{number}",
                            user,
                            tally,
                            misses if split == "dev" else [],
                        )
                    figures[split] = tally.figures()
        finally:
            mesh.stop()
    return figures, misses


def main(argv: list[str]) -> None:
    figures, misses = asyncio.run(evaluate())
    if "--misses" in argv:
        for miss in misses:
            print(f"dev miss: {miss}")
    for split, values in figures.items():
        print(
            f"{split}: found {values['found']} of {values['requests']} "
            f"({values['found_share']}), other facts per Brief "
            f"{values['other_facts_per_brief']}, degraded {values['degraded']}"
        )
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
