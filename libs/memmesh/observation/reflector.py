"""The Reflector (seed 004 T2): a thread's structured fields and the observations of its
conversations in, a short summary and 1-3 "where we left off" bullets with provenance out.
Observations of another thread are refused."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from memmesh.extraction.semantic.redaction import redact
from memmesh.observation.canonical import (
    content_hash,
    reflection_output,
    reflector_input,
    thread_batches,
)
from memmesh.observation.guardrails import Provider, Run, ask
from memmesh.observation.model import ConversationObservations, Reflection, ThreadState
from memmesh.observation.observer import RULES_PROVIDER, RULES_VERSION, limits_of, provider_of
from memmesh.observation.prompts import PROMPTS, reflector_messages
from memmesh.observation.rules_reflector import reflect_by_rules
from memmesh.observation.schema import parse_reflector_reply
from memmesh.observation.settings import ObservationSettings
from memmesh.observation.validation import validate_reflection


def _redacted(text: str) -> str:
    return redact(text).text


def redacted_thread(thread: ThreadState) -> ThreadState:
    """The thread's fields as they may leave the mesh."""
    return replace(
        thread,
        title=_redacted(thread.title),
        key_entities=tuple(_redacted(e) for e in thread.key_entities),
        last_decisions=tuple(_redacted(d) for d in thread.last_decisions),
        unresolved_questions=tuple(_redacted(q) for q in thread.unresolved_questions),
        next_step=_redacted(thread.next_step),
    )


def redacted_batch(batch: ConversationObservations) -> ConversationObservations:
    """A batch's observations as they may leave the mesh."""
    return replace(
        batch,
        observations=tuple(replace(o, text=_redacted(o.text)) for o in batch.observations),
    )


class Reflector:
    """Reflects one thread at a time; never raises for provider trouble."""

    def __init__(self, settings: ObservationSettings, provider: Provider | None = None) -> None:
        self._settings = settings
        self._prompt = PROMPTS[settings.prompt_version]
        self._limits = limits_of(settings)
        self._provider = provider_of(settings, provider)

    async def reflect(
        self, thread: ThreadState, batches: Sequence[ConversationObservations]
    ) -> Reflection:
        """The thread's reflection; raise InvalidInput when a batch belongs to another thread."""
        started = time.monotonic()
        ordered = thread_batches(thread, batches)
        reflected: tuple[str, tuple[str, ...]] | None = None
        run = Run(RULES_PROVIDER, "", RULES_VERSION)
        if self._provider is not None:
            sent_thread = redacted_thread(thread)
            sent = [redacted_batch(b) for b in ordered]
            messages = reflector_messages(self._prompt, sent_thread, sent)
            source = messages[-1]["content"]
            lines = [o.text for b in sent for o in b.observations]
            lines += [*sent_thread.last_decisions, *sent_thread.unresolved_questions]

            def accept(content: str) -> tuple[str, tuple[str, ...]]:
                reply = parse_reflector_reply(content)
                validate_reflection(reply, source, lines)
                return " ".join(reply.summary.split()), tuple(
                    " ".join(b.split()) for b in reply.left_off
                )

            outcome = await ask(
                self._provider,
                self._settings.reflector_model,
                self._prompt.version,
                messages,
                accept,
                self._limits,
            )
            reflected, run = outcome.value, outcome.run
        summary, left_off = reflected or reflect_by_rules(thread, ordered)
        return Reflection(
            thread_id=thread.thread_id,
            summary=summary,
            left_off=left_off,
            provenance=run.provenance(
                content_hash(reflector_input(thread, ordered)),
                content_hash(reflection_output(summary, left_off)),
                started,
            ),
        )
