"""LiveKit Agents: an Agent whose LLM sees the user's memory (install `memmesh[livekit]`).

`MemoryAgent` Briefs the latest user message when the LLM is about to run on it (its
`llm_node`, which every reply passes through: a voice turn the STT completed and a typed
one alike) and gives the LLM the rendered bundle as a system message after the
instructions, for that reply only. It ingests the user's and its own messages as the
session adds them to the conversation, and closes the memory session when the agent
session closes. Memory that fails or runs late leaves the context as it was.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Any

from livekit.agents import Agent, AgentSession, FlushSentinel, ModelSettings, llm
from livekit.agents.voice.events import CloseEvent, ConversationItemAddedEvent

from memmesh.voice.turns import VoiceMemory

SPEAKERS = ("user", "assistant")


def _last_user_message(chat_ctx: llm.ChatContext) -> llm.ChatMessage | None:
    for item in reversed(chat_ctx.items):
        if isinstance(item, llm.ChatMessage) and item.role == "user":
            return item
    return None


def _after_instructions(chat_ctx: llm.ChatContext) -> int:
    index = 0
    for item in chat_ctx.items:
        if not (isinstance(item, llm.ChatMessage) and item.role in ("system", "developer")):
            break
        index += 1
    return index


class MemoryAgent(Agent):
    """An Agent with memmesh memory; subclass it as you would Agent."""

    def __init__(self, *, memory: VoiceMemory, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.memory = memory
        self._briefed_message_id = ""
        self._prompt = ""
        self._attached = False

    async def on_enter(self) -> None:
        """Ingest the conversation as the session adds to it; close memory with the session."""
        await super().on_enter()
        if not self._attached:
            self._attached = True
            attach_memory(self.session, self.memory)

    async def _memory_prompt(self, chat_ctx: llm.ChatContext) -> str:
        message = _last_user_message(chat_ctx)
        if message is None:
            return ""
        # A tool call's follow-up runs the LLM again on the same user turn: one Brief per turn.
        if message.id != self._briefed_message_id:
            self._briefed_message_id = message.id
            self._prompt = await self.memory.prompt_for(message.text_content or "")
        return self._prompt

    async def llm_node(
        self,
        chat_ctx: llm.ChatContext,
        tools: list[llm.Tool],
        model_settings: ModelSettings,
    ) -> AsyncIterable[llm.ChatChunk | str | FlushSentinel]:
        """The default LLM node, on the context with this turn's memory in it."""
        prompt = await self._memory_prompt(chat_ctx)
        if prompt:
            chat_ctx = chat_ctx.copy()
            memory_message = llm.ChatMessage(role="system", content=[prompt])
            chat_ctx.items.insert(_after_instructions(chat_ctx), memory_message)
        async for chunk in Agent.default.llm_node(self, chat_ctx, tools, model_settings):
            yield chunk


def attach_memory(session: AgentSession[Any], memory: VoiceMemory) -> None:
    """Queue each user and assistant message for Ingest; close the memory with the session."""

    def on_item(event: ConversationItemAddedEvent) -> None:
        item = event.item
        if isinstance(item, llm.ChatMessage) and item.role in SPEAKERS and item.text_content:
            memory.remember(item.role, item.text_content)

    def on_close(_: CloseEvent) -> None:
        memory.close_soon()

    session.on("conversation_item_added", on_item)
    session.on("close", on_close)
