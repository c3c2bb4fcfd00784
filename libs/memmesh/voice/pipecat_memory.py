"""Pipecat: a FrameProcessor that gives the LLM the user's memory (install `memmesh[pipecat]`).

Place it between the user context aggregator and the LLM, as Pipecat's own memory
services go::

    Pipeline([transport.input(), stt, context.user(), memory, llm, tts,
              transport.output(), context.assistant()])

On each LLM context frame it Briefs the latest user message and puts the rendered bundle
into the context as one "developer" message after the instructions (Pipecat turns it into
what each provider takes; it replaces the previous turn's), then queues the
new user and assistant messages for Ingest. When the pipeline ends it ingests the last
reply and closes the session. Memory that fails or runs late leaves the context as it was.
"""

from __future__ import annotations

from typing import Any

from pipecat.frames.frames import Frame, LLMContextFrame
from pipecat.processors.aggregators.llm_context import LLMContext, LLMStandardMessage
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from memmesh.voice.turns import VoiceMemory

SPEAKERS = ("user", "assistant")
INSTRUCTIONS = ("system", "developer")


def message_text(message: Any) -> str:
    """The text of a standard context message (plain or in text parts); "" otherwise."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def after_instructions(messages: list[Any]) -> int:
    """The index just past the leading system and developer messages."""
    index = 0
    while index < len(messages) and message_role(messages[index]) in INSTRUCTIONS:
        index += 1
    return index


def message_role(message: Any) -> str:
    """The role of a standard context message ("" for a provider-specific one)."""
    return str(message.get("role", "")) if isinstance(message, dict) else ""


class MemmeshMemoryService(FrameProcessor):
    """Brief before the LLM, Ingest after, for one conversation's VoiceMemory."""

    def __init__(self, memory: VoiceMemory, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.memory = memory
        self._memory_message: LLMStandardMessage | None = None
        self._context: LLMContext | None = None
        self._ingested = 0

    def _conversation(self, context: LLMContext) -> list[tuple[str, str]]:
        return [
            (message_role(message), message_text(message))
            for message in context.get_messages()
            if message is not self._memory_message
            and message_role(message) in SPEAKERS
            and message_text(message)
        ]

    def _new_turns(self, context: LLMContext) -> list[tuple[str, str]]:
        conversation = self._conversation(context)
        new = conversation[self._ingested :]
        self._ingested = len(conversation)
        return new

    def _remember(self, turns: list[tuple[str, str]]) -> None:
        for role, text in turns:
            self.memory.remember(role, text)

    async def _add_memory(self, context: LLMContext) -> None:
        self._context = context
        new_turns = self._new_turns(context)
        new_user_texts = [text for role, text in new_turns if role == "user"]
        previous = self._memory_message
        if new_user_texts:
            prompt = await self.memory.prompt_for(new_user_texts[-1])
            self._memory_message = {"role": "developer", "content": prompt} if prompt else None
        messages = [m for m in context.get_messages() if m is not previous]
        if self._memory_message is not None:
            messages.insert(after_instructions(messages), self._memory_message)
        context.set_messages(messages)
        # Ingested after the Brief, so the turn's own words are not in its bundle twice.
        self._remember(new_turns)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        """Add memory to each LLM context on its way to the LLM; pass every frame on."""
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMContextFrame) and direction == FrameDirection.DOWNSTREAM:
            await self._add_memory(frame.context)
        await self.push_frame(frame, direction)

    async def cleanup(self) -> None:
        """At the pipeline's end: ingest the last reply and close the session."""
        await super().cleanup()  # type: ignore[no-untyped-call]
        if self._context is not None:
            self._remember(self._new_turns(self._context))
        await self.memory.aclose()
