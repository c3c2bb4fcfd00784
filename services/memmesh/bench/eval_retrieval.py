"""`make eval-retrieval`: felt memory on LoCoMo through the gateway.

Each conversation is ingested twice, once from each speaker's side (that speaker's turns
as the user's, the other's as the assistant's), session by session with the dataset's
dates, each session closed so its digest is written. Then for every question of
categories 1-4, `Brief` is called as the user the question names (both users when it
names neither or both, counting the union) with the question as the query and `now`
just after the last session. Evidence recall is the share of a question's evidence
turns the bundle covers: an atom or digest covers the turns it cites, an excerpt or
working-memory turn covers itself. The dataset is read from ../shared, never copied.

Once everything is ingested, the questions are asked three times on the same data, the
RetrievalRanker restarted in each retrieval mode in turn (BM25 alone, dense alone, both
fused: the engine's default), so the gain of the fusion is measured on one ingestion; one
uncounted Brief per user first reads each index into the restarted process.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.bench.stats import summary
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from memmesh.runtime.supervisor import Mesh, built_engines

DEFAULT_DATASET = Path("../shared/datasets/locomo10.json")
TENANT, KEY = "locomo", "locomo-eval-key"
CATEGORIES = (1, 2, 3, 4)
MODES = ("bm25", "dense", "fused")
MODE_VARIABLE = "MEMMESH_RETRIEVAL_RANKER_RETRIEVAL_MODE"
RANKER = "retrieval_ranker"
BUDGET_VARIABLE = "MEMMESH_GATEWAY_BRIEF_BUDGET_MS"
_DIA_ID = re.compile(r"D\d+:\d+")


def session_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' as a UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def timestamp(moment: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp


def sessions_of(conversation: dict) -> list[tuple[str, datetime, list[dict]]]:  # type: ignore[type-arg]
    numbers = sorted(int(k.split("_")[1]) for k in conversation if re.fullmatch(r"session_\d+", k))
    return [
        (
            f"session_{n}",
            session_time(conversation[f"session_{n}_date_time"]),
            conversation[f"session_{n}"],
        )
        for n in numbers
    ]


def turn_text(turn: dict[str, Any]) -> str:
    """A turn's words, a shared photo's caption appended as the user would see it."""
    text = str(turn["text"])
    if turn.get("blip_caption"):
        text = f"{text} [shares a photo: {turn['blip_caption']}]"
    return text


def evidence_of(qa: dict[str, Any]) -> set[str]:
    """The dialogue ids of a question's evidence turns."""
    return {e for raw in qa.get("evidence", []) for e in _DIA_ID.findall(raw)}


def user_id(sample: int, speaker: str) -> str:
    return f"locomo{sample}-{re.sub(r'[^A-Za-z0-9]', '', speaker).lower()}"


def turn_id(user: str, dia_id: str) -> str:
    return f"{user}-{dia_id.replace(':', '-')}"


class Gateway:
    def __init__(self, addr: str) -> None:
        self._channel = grpc.insecure_channel(addr)
        self._stub = pb_grpc.GatewayServiceStub(self._channel)
        self._metadata = [("authorization", f"Bearer {KEY}")]

    def scope(self, user: str) -> scope_pb2.UserScope:
        return scope_pb2.UserScope(tenant_id=TENANT, user_id=user)

    def ingest(
        self,
        user: str,
        session: str,
        tid: str,
        role: memory_pb2.Role.ValueType,
        text: str,
        at: datetime,
    ) -> None:
        turn = memory_pb2.Turn(
            turn_id=tid, session_id=session, role=role, text=text, time=timestamp(at)
        )
        self._stub.Ingest(
            pb.IngestRequest(scope=self.scope(user), turn=turn), metadata=self._metadata, timeout=30
        )

    def close_session(self, user: str, session: str, at: datetime) -> None:
        request = pb.CloseSessionRequest(
            scope=self.scope(user), session_id=session, now=timestamp(at)
        )
        self._stub.CloseSession(request, metadata=self._metadata, timeout=30)

    def brief(
        self, user: str, session: str, query: str, at: datetime
    ) -> tuple[pb.BriefResponse, float]:
        request = pb.BriefRequest(
            scope=self.scope(user),
            session_id=session,
            now=timestamp(at),
            query=query,
            channel=memory_pb2.CHANNEL_TEXT,
            identity_verified=True,
        )
        started = time.perf_counter()
        response = self._stub.Brief(request, metadata=self._metadata, timeout=30)
        return response, (time.perf_counter() - started) * 1000

    def close(self) -> None:
        self._channel.close()


def covered_turn_ids(response: pb.BriefResponse) -> set[str]:
    bundle = response.bundle
    covered = {t.turn_id for t in bundle.working_memory} | {t.turn_id for t in bundle.excerpts}
    for atom in bundle.atoms:
        covered.update(atom.evidence_turn_ids)
    for digest in bundle.digests:
        covered.update(digest.evidence_turn_ids)
    return covered


def ingest_conversation(
    gateway: Gateway, sample: int, conversation: dict[str, Any]
) -> tuple[dict[str, str], datetime]:
    """Ingest from both sides; returns speaker -> user id and the time of the last turn."""
    speakers = {
        conversation["speaker_a"]: user_id(sample, conversation["speaker_a"]),
        conversation["speaker_b"]: user_id(sample, conversation["speaker_b"]),
    }
    last = datetime.min.replace(tzinfo=UTC)
    for speaker, user in speakers.items():
        for session, started, turns in sessions_of(conversation):
            at = started
            for index, turn in enumerate(turns):
                at = started + timedelta(seconds=30 * index)
                role = (
                    memory_pb2.ROLE_USER
                    if turn["speaker"] == speaker
                    else memory_pb2.ROLE_ASSISTANT
                )
                gateway.ingest(
                    user, session, turn_id(user, turn["dia_id"]), role, turn_text(turn), at
                )
            gateway.close_session(user, session, at + timedelta(seconds=30))
            last = max(last, at)
    return speakers, last


def ask_every_question(
    gateway: Gateway,
    samples: list[dict[str, Any]],
    ingested: list[tuple[dict[str, str], datetime]],
    mode: str,
) -> dict[str, object]:
    """Brief every question of categories 1-4 (each mode in sessions of its own) and score."""
    recalls: dict[int, list[float]] = defaultdict(list)
    sizes, latencies, degraded = [], [], 0
    for item, (speakers, last) in zip(samples, ingested, strict=True):
        now = last + timedelta(hours=1)
        for number, qa in enumerate(item["qa"]):
            if qa.get("category") not in CATEGORIES:
                continue
            evidence = evidence_of(qa)
            if not evidence:
                continue
            named = [
                user
                for speaker, user in speakers.items()
                if speaker.lower() in qa["question"].lower()
            ]
            users = named if len(named) == 1 else list(speakers.values())
            covered: set[str] = set()
            for user in users:
                response, elapsed = gateway.brief(
                    user, f"eval-{mode}-q{number}", qa["question"], now
                )
                latencies.append(elapsed)
                sizes.append(response.counters.context_bundle_bytes)
                degraded += int(response.degraded)
                covered |= {
                    t.removeprefix(f"{user}-").replace("-", ":", 1)
                    for t in covered_turn_ids(response)
                }
            recalls[qa["category"]].append(len(evidence & covered) / len(evidence))
    every = [r for values in recalls.values() for r in values]
    return {
        "evidence_recall": round(statistics.fmean(every), 4),
        "evidence_recall_by_category": {
            str(c): round(statistics.fmean(v), 4) for c, v in sorted(recalls.items())
        },
        "questions": len(every),
        "mean_bundle_bytes": round(statistics.fmean(sizes), 1),
        "brief_latency": summary(latencies),
        "degraded_briefs": degraded,
        "briefs": len(latencies),
    }


def numbered_conversations(
    samples: list[dict[str, Any]], limit: int | None, skip: int = 0
) -> list[tuple[int, dict[str, Any]]]:
    """The first `limit` conversations less the first `skip`, each with its number in the
    dataset (its users' ids keep it whatever is left out)."""
    return list(enumerate(samples[:limit]))[skip:]


def evaluate(
    dataset: Path, limit: int | None, brief_budget_ms: int | None = None, skip: int = 0
) -> dict[str, dict[str, object]]:
    """Ingest every conversation once (the first `limit`, less the first `skip`), then the
    figures of each retrieval mode."""
    numbered = numbered_conversations(json.loads(dataset.read_text()), limit, skip)
    samples = [item for _, item in numbered]
    figures: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as data_dir:
        env = {
            "MEMMESH_DATA_DIR": data_dir,
            "MEMMESH_LOG_LEVEL": "WARNING",
            "MEMMESH_GATEWAY_TENANT_KEYS": json.dumps({TENANT: KEY}),
            MODE_VARIABLE: "fused",
        }
        if brief_budget_ms is not None:
            env[BUDGET_VARIABLE] = str(brief_budget_ms)
        mesh = Mesh(built_engines(), env=env)
        mesh.start()
        gateway = Gateway(mesh.addrs["gateway"])
        try:
            ingested = []
            for sample, item in numbered:
                started = time.perf_counter()
                ingested.append(ingest_conversation(gateway, sample, item["conversation"]))
                print(
                    f"conversation {sample}: ingested in {time.perf_counter() - started:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
            for mode in MODES:
                # The same address: the other engines reconnect to the ranker in its new mode.
                env[MODE_VARIABLE] = mode
                mesh.kill(RANKER, signal.SIGTERM)
                mesh.start([RANKER])
                # Each user's index is read into the new process before the questions, as
                # it would be after the ingestion: a cold first read is not a mode's cost.
                for speakers, last in ingested:
                    for user in speakers.values():
                        gateway.brief(user, f"eval-{mode}-warm", "hello", last)
                figures[mode] = ask_every_question(gateway, samples, ingested, mode)
                print(f"{mode}: {figures[mode]}", file=sys.stderr, flush=True)
        finally:
            gateway.close()
            mesh.stop()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    parser.add_argument(
        "--skip",
        type=int,
        default=0,
        help="leave out the first N conversations (--skip 2: the held-out split, conversations "
        "2-9, apart from the dev conversations 0-1 that settings are chosen on)",
    )
    parser.add_argument(
        "--brief-budget-ms",
        type=int,
        default=None,
        help="the gateway's Brief budget (default: the gateway's own); a generous one measures "
        "retrieval quality apart from degradation on a loaded machine",
    )
    args = parser.parse_args()
    if not args.dataset.exists():
        raise SystemExit(
            f"{args.dataset} not found: run from the repository with ../shared beside it"
        )
    by_mode = evaluate(args.dataset, args.limit, args.brief_budget_ms, args.skip)
    for mode, figures in by_mode.items():
        print(
            f"{mode}: evidence recall {figures['evidence_recall']} over {figures['questions']} "
            f"questions, by category {figures['evidence_recall_by_category']}"
        )
        print(
            f"{mode}: mean bundle bytes {figures['mean_bundle_bytes']}, Brief latency "
            f"{figures['brief_latency']}, degraded {figures['degraded_briefs']} of {figures['briefs']}"
        )
    print(json.dumps(by_mode, sort_keys=True))


if __name__ == "__main__":
    main()
