"""`memmesh chat` and `memmesh replay`: a person's view of what the assistant is given."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TextIO

from google.protobuf import json_format
from google.protobuf.timestamp_pb2 import Timestamp

from memmesh.client.gateway import GatewayClient
from memmesh.common.v1 import bundle_pb2
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.runtime.timeconv import micros_of

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
        digest = hashlib.sha256(
            f"{self.user_id}\x1f{self.session_id}\x1f{self.line}\x1f{self.text}".encode()
        ).hexdigest()
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
            yield ReplayTurn(
                str(item["user_id"]), str(item["session_id"]), role, str(item["text"]), time, number
            )
        except (KeyError, ValueError, TypeError) as error:
            raise SystemExit(f"line {number}: {error}") from error


def render_bundle(response: pb.BriefResponse) -> str:
    """A short human-readable view of a Brief response."""
    bundle: bundle_pb2.ContextBundle = response.bundle
    lines = []
    if response.degraded:
        lines.append(f"  (degraded: {response.reason_code} {' '.join(response.degraded_parts)})")
    push = bundle.push
    known = [
        f"name={push.display_name}" if push.display_name else "",
        f"language={push.primary_language}" if push.primary_language else "",
    ]
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
    lines.append(
        f"  ({counters.context_bundle_bytes} bytes, {counters.atoms_selected_count} atoms, {counters.excerpts_selected_count} excerpts)"
    )
    return "\n".join(lines)


def now_us() -> int:
    return int(datetime.now(UTC).timestamp() * 1_000_000)


async def replay(
    client: GatewayClient, source: TextIO, out: TextIO, as_json: bool, channel: str
) -> int:
    """Brief before each user turn (the turn's text as the query), then ingest every turn."""
    for turn in read_conversation(source):
        at = micros_of(turn.time)
        if turn.role == "user":
            response = await client.brief(
                turn.user_id, turn.session_id, at, turn.text, channel=channel
            )
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
                out.write(
                    f"{turn.time.ToJsonString()} {turn.user_id}> {turn.text}\n{render_bundle(response)}\n"
                )
        await client.ingest(turn.user_id, turn.session_id, turn.turn_id, turn.role, turn.text, at)
    return 0


async def chat(
    client: GatewayClient,
    user_id: str,
    session_id: str,
    channel: str,
    source: TextIO = sys.stdin,
    out: TextIO = sys.stdout,
) -> int:
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
        if not source.isatty():
            out.write(text + "\n")  # piped input: show it, so the transcript reads like a session
        if not text:
            continue
        if text == "/remember":
            for item in await client.remember(user_id, channel=channel):
                out.write(f"  - {item}\n")
            continue
        if text == "/new":
            session_id = f"chat-{datetime.now(UTC):%Y%m%d%H%M%S}"
            out.write(f"  (new session {session_id})\n")
            continue
        now = now_us()
        out.write(
            render_bundle(await client.brief(user_id, session_id, now, text, channel=channel))
            + "\n"
        )
        count += 1
        reply = await client.ingest(
            user_id, session_id, f"{session_id}-{count}-{now}", "user", text, now
        )
        if reply.command:
            out.write(f"  (command: {reply.command})\n")
