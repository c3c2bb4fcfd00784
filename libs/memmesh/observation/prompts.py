"""The versioned Observer and Reflector prompts, and the guidance a retry carries (seed 004:
strict output contracts; each retry names what was wrong, more firmly each time)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from memmesh.observation.model import (
    MAX_LEFT_OFF,
    MAX_LEFT_OFF_CHARS,
    MAX_OBSERVATION_CHARS,
    MAX_SUMMARY_CHARS,
    ConversationObservations,
    ObservationKind,
    ObservedTurn,
    ThreadState,
)

Messages = list[dict[str, str]]

_KINDS = ", ".join(kind.value for kind in ObservationKind)

_OBSERVER_2025_1 = f"""You are the Observer of a memory system for a voice assistant, not a chat
assistant. You read one conversation between a user and the assistant and write down what is
worth remembering about the user: facts, preferences, decisions, plans, questions left open,
and events.

Rules:
- Write each observation in the third person, starting with "User" ("User is moving to
  Lisbon in May."), without fillers, hedges or small talk.
- Use only what the turns say. Every name, number, date and amount must appear in the turns
  you cite, spelled as there. Never guess, never add.
- Cite in "turn_ids" the ids of the turns (in square brackets) that say it.
- kind is one of: {_KINDS}.
- At most {{max_observations}} observations, each at most {MAX_OBSERVATION_CHARS} characters,
  each distinct. Placeholders such as [REDACTED:credentials] are never observations.

Answer with one JSON object and nothing else, no code fences:
{{{{"observations": [{{{{"text": "User ...", "kind": "decision", "turn_ids": ["..."]}}}}]}}}}"""

_REFLECTOR_2025_1 = f"""You are the Reflector of a memory system for a voice assistant, not a
chat assistant. You condense what is known about one conversation thread: its structured
fields and the observations of its conversations.

Rules:
- "summary": at most {MAX_SUMMARY_CHARS} characters, shorter than the input, in your own
  words: the topic, what was decided, the key facts, what is still open. Do not copy the
  observations one after another.
- "left_off": 1 to {MAX_LEFT_OFF} short bullets (at most {MAX_LEFT_OFF_CHARS} characters each)
  saying where the conversation was left: the next step, the newest decision, the open
  question.
- Use only names, numbers and dates that appear in the input. Never guess, never add.

Answer with one JSON object and nothing else, no code fences:
{{"summary": "...", "left_off": ["..."]}}"""


@dataclass(frozen=True)
class PromptSet:
    """The system prompts of one prompt version."""

    version: str
    observer: str
    reflector: str


PROMPTS = {
    "observation-2025.1": PromptSet("observation-2025.1", _OBSERVER_2025_1, _REFLECTOR_2025_1),
}


def observer_messages(
    prompt: PromptSet, turns: Sequence[ObservedTurn], max_observations: int
) -> Messages:
    """Chat messages for one batch of one conversation (texts already redacted)."""
    lines = [f"[{t.turn_id}] {t.role}: {' '.join(t.text.split())}" for t in turns]
    return [
        {"role": "system", "content": prompt.observer.format(max_observations=max_observations)},
        {"role": "user", "content": "Conversation:\n" + "\n".join(lines)},
    ]


def reflector_messages(
    prompt: PromptSet, thread: ThreadState, batches: Sequence[ConversationObservations]
) -> Messages:
    """Chat messages for one thread (texts already redacted)."""
    fields = {
        "title": thread.title,
        "key_entities": list(thread.key_entities),
        "last_decisions": list(thread.last_decisions),
        "unresolved_questions": list(thread.unresolved_questions),
        "next_step": thread.next_step,
    }
    observations = [f"- ({o.kind.value}) {o.text}" for batch in batches for o in batch.observations]
    content = (
        "Thread fields:\n"
        + json.dumps(fields, ensure_ascii=False, sort_keys=True)
        + "\nObservations:\n"
        + ("\n".join(observations) or "(none)")
    )
    return [
        {"role": "system", "content": prompt.reflector},
        {"role": "user", "content": content},
    ]


def with_guidance(
    messages: Messages, rejected_reply: str, problems: Sequence[str], attempt: int
) -> Messages:
    """The first messages, the rejected reply and what was wrong with it; from the third
    attempt on the guidance asks for less and plainer output (Mastra's escalating retries)."""
    lines = "\n".join(f"- {problem}" for problem in problems)
    firmer = (
        "\nThis is a further attempt: give fewer and shorter items, use only words, names and "
        "numbers that appear in the input, and answer with the JSON object alone."
        if attempt >= 2
        else ""
    )
    return [
        *messages,
        {"role": "assistant", "content": rejected_reply[:2000]},
        {
            "role": "user",
            "content": f"Your reply was rejected:\n{lines}\nAnswer again, following the rules.{firmer}",
        },
    ]
