"""`memmesh chat` and `memmesh replay`: a person's view of what the assistant is given."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TextIO

import grpc
from google.protobuf import json_format
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.common.v1 import bundle_pb2, memory_pb2, scope_pb2
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.gateway.v1 import gateway_service_pb2_grpc as pb_grpc

TAG_NAMES = {1: "CONFIRMED", 2: "TENTATIVE", 3: "STALE", 4: "CONFLICT"}


@dataclass(frozen=True)
class ReplayTurn:
    """One line of a conversation file."""

    user_id: str
    session_id: str
    role: str
    text: str
    time: Timestamp
    line: int

    @property
    def turn_id(self) -> str:
        digest = hashlib.sha256(f"{self.user_id}\x1f{self.session_id}\x1f{self.line}\x1f{self.text}".encode()).hexdigest()
        return f"replay-{digest[:20]}"


def read_conversation(source: TextIO) -> Iterator[ReplayTurn]:
    """Turns of a JSON Lines conversation file; a bad line stops with its number."""
    for number, raw in enumerate(source, start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
            time = Timestamp()
            time.FromJsonString(item["time"])
            role = item["role"]
            if role not in ("user", "assistant"):
                raise ValueError("role must be user or assistant")
            yield ReplayTurn(str(item["user_id"]), str(item["session_id"]), role, str(item["text"]), time, number)
        except (KeyError, ValueError, TypeError) as error:
            raise SystemExit(f"line {number}: {error}") from error


class GatewaySession:
    """Calls the gateway with the tenant's key."""

    def __init__(self, channel: grpc.Channel, tenant_id: str, tenant_key: str, channel_kind: int) -> None:
        self._stub = pb_grpc.GatewayServiceStub(channel)
        self._metadata = [("authorization", f"Bearer {tenant_key}")]
        self._tenant_id = tenant_id
        self._channel_kind = channel_kind

    def scope(self, user_id: str) -> scope_pb2.UserScope:
        return scope_pb2.UserScope(tenant_id=self._tenant_id, user_id=user_id)

    def brief(self, user_id: str, session_id: str, query: str, now: Timestamp) -> pb.BriefResponse:
        request = pb.BriefRequest(
            scope=self.scope(user_id), session_id=session_id, now=now, query=query,
            channel=self._channel_kind, identity_verified=True,
        )
        return self._stub.Brief(request, metadata=self._metadata, timeout=5)

    def ingest(self, user_id: str, session_id: str, turn_id: str, role: str, text: str, now: Timestamp) -> pb.IngestResponse:
        turn = memory_pb2.Turn(
            turn_id=turn_id, session_id=session_id, text=text, time=now,
            role=memory_pb2.ROLE_USER if role == "user" else memory_pb2.ROLE_ASSISTANT,
        )
        return self._stub.Ingest(pb.IngestRequest(scope=self.scope(user_id), turn=turn), metadata=self._metadata, timeout=10)

    def remember(self, user_id: str) -> pb.RememberResponse:
        request = pb.RememberRequest(scope=self.scope(user_id), channel=self._channel_kind, identity_verified=True)
        return self._stub.Remember(request, metadata=self._metadata, timeout=5)


def render_bundle(response: pb.BriefResponse) -> str:
    """A short human-readable view of a Brief response."""
    bundle: bundle_pb2.ContextBundle = response.bundle
    lines = []
    if response.degraded:
        lines.append(f"  (degraded: {response.reason_code} {' '.join(response.degraded_parts)})")
    push = bundle.push
    known = [f"name={push.display_name}" if push.display_name else "", f"language={push.primary_language}" if push.primary_language else ""]
    if any(known):
        lines.append("  push: " + " ".join(k for k in known if k))
    if bundle.episode_bridge:
        lines.append(f"  bridge: {bundle.episode_bridge}")
    if bundle.rolling_summary:
        lines.append(f"  summary: {bundle.rolling_summary}")
    for loop in bundle.active_loops:
        lines.append(f"  open loop: {loop.text}")
    for atom in bundle.atoms:
        lines.append(f"  [{TAG_NAMES.get(atom.tag, '?')}] {atom.text}")
    for excerpt in bundle.excerpts:
        lines.append(f"  excerpt: {excerpt.text}")
    if bundle.clarification.text:
        lines.append(f"  ask: {bundle.clarification.text}")
    counters = response.counters
    lines.append(f"  ({counters.context_bundle_bytes} bytes, {counters.atoms_selected_count} atoms, {counters.excerpts_selected_count} excerpts)")
    return "\n".join(lines)


def now_timestamp() -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(datetime.now(UTC))
    return stamp


def replay(session: GatewaySession, source: TextIO, out: TextIO, as_json: bool) -> int:
    """Brief before each user turn (the turn's text as the query), then ingest every turn."""
    for turn in read_conversation(source):
        if turn.role == "user":
            response = session.brief(turn.user_id, turn.session_id, turn.text, turn.time)
            if as_json:
                record = {
                    "user_id": turn.user_id,
                    "session_id": turn.session_id,
                    "time": turn.time.ToJsonString(),
                    "query": turn.text,
                    "bundle": json_format.MessageToDict(response.bundle),
                    "counters": json_format.MessageToDict(response.counters),
                    "degraded": response.degraded,
                    "reason_code": response.reason_code,
                }
                out.write(json.dumps(record, sort_keys=True) + "\n")
            else:
                out.write(f"{turn.time.ToJsonString()} {turn.user_id}> {turn.text}\n{render_bundle(response)}\n")
        session.ingest(turn.user_id, turn.session_id, turn.turn_id, turn.role, turn.text, turn.time)
    return 0


def chat(session: GatewaySession, user_id: str, session_id: str, source: TextIO = sys.stdin, out: TextIO = sys.stdout) -> int:
    """Type as the user; see the bundle the assistant would get, then the turn is ingested."""
    out.write(f"memmesh chat as {user_id} (session {session_id}). /remember, /new, /quit\n")
    count = 0
    while True:
        out.write("you> ")
        out.flush()
        line = source.readline()
        if not line or line.strip() == "/quit":
            return 0
        text = line.strip()
        if not text:
            continue
        if text == "/remember":
            for item in session.remember(user_id).items:
                out.write(f"  - {item}\n")
            continue
        if text == "/new":
            session_id = f"chat-{datetime.now(UTC):%Y%m%d%H%M%S}"
            out.write(f"  (new session {session_id})\n")
            continue
        now = now_timestamp()
        out.write(render_bundle(session.brief(user_id, session_id, text, now)) + "\n")
        count += 1
        reply = session.ingest(user_id, session_id, f"{session_id}-{count}-{now.ToNanoseconds()}", "user", text, now)
        if reply.command:
            out.write(f"  (command: {reply.command})\n")
