"""Bundle → prompt: the one text an LLM receives from a Context Bundle.

Sections, in this order, each only when the bundle has it:
  the header (how to use what follows), temporal authority (the only clock to trust),
  push facts, "use, do not say" items under their explicit instruction, the tagged atoms
  with what each tag present means, the one clarification question, the episode bridge,
  the rolling summary, open commitments, the working-memory turns, archive excerpts,
  digests, related entities, tone.

Bounded: the text never exceeds `budget_bytes` (UTF-8). When it would, whole lines are
left out, the least important first (tone, entities, digests, excerpts, working memory,
loops, summary, bridge, then atoms from the last); the header, the clock, the push facts,
the do-not-say items with their instruction and the question are kept before anything
else. Deterministic: the text depends on the bundle and the budget only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from memmesh.common.v1 import bundle_pb2, memory_pb2

DEFAULT_BUDGET_BYTES = 2048
# Longest text of one item; a long excerpt or summary is cut at a word.
ITEM_CHARS = 280

HEADER = (
    "Memory of this user (from earlier conversations). Use it to answer naturally; "
    "never read it out as a list or say where it comes from."
)
DO_NOT_SAY_INSTRUCTION = (
    "Use, do not say: let these shape your answer, but never say, quote or hint at them, "
    "and never give them as the reason for an answer."
)
TAG_MEANINGS = {
    memory_pb2.MEMORY_TAG_TENTATIVE: "TENTATIVE = uncertain; hedge, or check before relying on it",
    memory_pb2.MEMORY_TAG_STALE: "STALE = may be out of date; confirm it still holds before using it",
    memory_pb2.MEMORY_TAG_CONFLICT: (
        "CONFLICT = sources disagree; do not pick one, ask the clarification question"
    ),
}
TAG_NAMES = {
    memory_pb2.MEMORY_TAG_UNSPECIFIED: "",
    memory_pb2.MEMORY_TAG_CONFIRMED: "CONFIRMED",
    memory_pb2.MEMORY_TAG_TENTATIVE: "TENTATIVE",
    memory_pb2.MEMORY_TAG_STALE: "STALE",
    memory_pb2.MEMORY_TAG_CONFLICT: "CONFLICT",
}
ROLE_NAMES = {memory_pb2.ROLE_USER: "user", memory_pb2.ROLE_ASSISTANT: "assistant"}

# Lower is kept first when the budget is short.
ESSENTIAL, CONSTRAINT, QUESTION, ATOM, BRIDGE, SUMMARY, LOOP, WORKING, EXCERPT, DIGEST, EXTRA = (
    range(11)
)


@dataclass(frozen=True)
class Line:
    """One line of the prompt and how important it is to keep."""

    text: str
    rank: int
    # Within a rank, a larger order is left out first.
    order: int = 0
    # A section's title or instruction: left out with the last of its items.
    heading: bool = False


def clip(text: str, limit: int = ITEM_CHARS) -> str:
    """One line of at most `limit` characters, cut at a word."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"


def _time(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _elapsed(seconds: int) -> str:
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return "moments"


def _temporal(temporal: bundle_pb2.TemporalAuthority) -> Iterable[Line]:
    if not temporal.HasField("now"):
        return
    text = f"Now: {_time(temporal.now.seconds)} (trust this clock, not your own)"
    if temporal.HasField("last_interaction_time"):
        ago = _elapsed(temporal.time_since_last_interaction.seconds)
        text += f"; the user last spoke {ago} ago"
    yield Line(text + ".", ESSENTIAL)


def _push(push: bundle_pb2.PushMemory) -> Iterable[Line]:
    facts = [
        f"name {push.display_name}" if push.display_name else "",
        f"language {push.primary_language}" if push.primary_language else "",
        f"prefers to {push.contact_preference}" if push.contact_preference else "",
        f"time zone {push.timezone}" if push.timezone else "",
    ]
    if any(facts):
        yield Line("About the user: " + "; ".join(f for f in facts if f) + ".", ESSENTIAL)
    if push.do_not_repeat_keys:
        keys = ", ".join(push.do_not_repeat_keys)
        yield Line(f"Already known, do not ask again: {keys}.", ESSENTIAL)


def _turn_text(turn: bundle_pb2.BundleTurn) -> str:
    return f"{ROLE_NAMES.get(turn.role, 'someone')}: {clip(turn.text)}"


def _do_not_say(bundle: bundle_pb2.ContextBundle) -> Iterable[Line]:
    items = [clip(a.text) for a in bundle.atoms if a.do_not_say]
    items += [_turn_text(t) for t in (*bundle.working_memory, *bundle.excerpts) if t.do_not_say]
    if not items:
        return
    yield Line(DO_NOT_SAY_INSTRUCTION, CONSTRAINT, -1, heading=True)
    for index, text in enumerate(items):
        yield Line(f"- {text}", CONSTRAINT, index)


def _atoms(bundle: bundle_pb2.ContextBundle) -> Iterable[Line]:
    said = [a for a in bundle.atoms if not a.do_not_say]
    if not said:
        return
    yield Line("What you know:", ATOM, -1, heading=True)
    for index, atom in enumerate(said):
        tag = TAG_NAMES.get(atom.tag, "")
        yield Line(f"- [{tag}] {clip(atom.text)}" if tag else f"- {clip(atom.text)}", ATOM, index)
    tags = sorted({a.tag for a in said if a.tag in TAG_MEANINGS})
    if tags:
        meanings = "; ".join(TAG_MEANINGS[t] for t in tags)
        yield Line(f"Tags: {meanings}.", ATOM, -1, heading=True)


def _question(bundle: bundle_pb2.ContextBundle) -> Iterable[Line]:
    if bundle.HasField("clarification") and bundle.clarification.text:
        question = clip(bundle.clarification.text)
        yield Line(
            f"If it fits, ask this one question and no other about memory: {question}", QUESTION
        )


def _listed(title: str, texts: Sequence[str], rank: int) -> Iterable[Line]:
    if not texts:
        return
    yield Line(title, rank, -1, heading=True)
    for index, text in enumerate(texts):
        yield Line(f"- {text}", rank, index)


def _lines(bundle: bundle_pb2.ContextBundle, tone: Sequence[str]) -> list[Line]:
    lines = [Line(HEADER, ESSENTIAL)]
    lines += _temporal(bundle.temporal)
    lines += _push(bundle.push)
    lines += _do_not_say(bundle)
    lines += _atoms(bundle)
    lines += _question(bundle)
    if bundle.episode_bridge:
        lines.append(Line(f"Last time: {clip(bundle.episode_bridge)}", BRIDGE))
    if bundle.rolling_summary:
        lines.append(Line(f"This conversation so far: {clip(bundle.rolling_summary)}", SUMMARY))
    lines += _listed("Open commitments:", [clip(loop.text) for loop in bundle.active_loops], LOOP)
    said_turns = [t for t in bundle.working_memory if not t.do_not_say]
    lines += _listed("Recent turns:", [_turn_text(t) for t in said_turns], WORKING)
    said_excerpts = [t for t in bundle.excerpts if not t.do_not_say]
    lines += _listed("From earlier conversations:", [_turn_text(t) for t in said_excerpts], EXCERPT)
    digests = [clip(f"{d.title}: {d.summary}" if d.title else d.summary) for d in bundle.digests]
    lines += _listed("Earlier topics:", digests, DIGEST)
    entities = sorted({e.label for e in bundle.entities if e.label})
    if entities:
        lines.append(Line(f"Related: {', '.join(entities)}.", EXTRA))
    if tone:
        lines.append(Line(f"Tone: {', '.join(tone)}.", EXTRA, 1))
    return lines


def _fit(lines: Sequence[Line], budget_bytes: int) -> list[Line]:
    """The lines that fit, in their order, leaving out the least important first."""
    by_importance = sorted(range(len(lines)), key=lambda i: (lines[i].rank, lines[i].order, i))
    kept = set(by_importance)
    size = sum(len(line.text.encode()) + 1 for line in lines) - 1
    for index in reversed(by_importance):
        if size <= budget_bytes:
            break
        kept.discard(index)
        size -= len(lines[index].text.encode()) + 1
    # A heading whose items are all gone goes too.
    ranks_with_items = {lines[i].rank for i in kept if not lines[i].heading}
    return [
        lines[i] for i in sorted(kept) if not lines[i].heading or lines[i].rank in ranks_with_items
    ]


def render_bundle(
    bundle: bundle_pb2.ContextBundle,
    tone: Sequence[str] = (),
    budget_bytes: int = DEFAULT_BUDGET_BYTES,
) -> str:
    """The prompt text of a bundle, at most budget_bytes of UTF-8; "" for an empty bundle."""
    if not bundle.ByteSize():
        return ""
    return "\n".join(line.text for line in _fit(_lines(bundle, tone), budget_bytes))
