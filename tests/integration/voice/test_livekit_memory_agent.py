"""A LiveKit Agents session (AgentSession run on text turns, the framework's own test
path; a scripted LLM) with memmesh memory, against the engines as real processes, over
several calls of one user."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import calls_of_one_user
from livekit.agents import AgentSession, llm
from livekit.agents.llm import ChatChunk, ChoiceDelta
from livekit.agents.types import DEFAULT_API_CONNECT_OPTIONS, APIConnectOptions

from memmesh.runtime.supervisor import Mesh
from memmesh.voice.livekit_memory import MemoryAgent
from memmesh.voice.turns import VoiceMemory

INSTRUCTIONS = "You are a friendly voice assistant."
REPLY = "Sure, let me think about that."


class ScriptedStream(llm.LLMStream):
    async def _run(self) -> None:
        context = self.chat_ctx
        assert isinstance(self._llm, ScriptedLLM)
        self._llm.contexts.append(
            [item.text_content or "" for item in context.items if isinstance(item, llm.ChatMessage)]
        )
        self._event_ch.send_nowait(
            ChatChunk(id="reply", delta=ChoiceDelta(role="assistant", content=REPLY))
        )


class ScriptedLLM(llm.LLM):
    """Stands in for the model: records the context of each reply and answers one line."""

    def __init__(self) -> None:
        super().__init__()
        self.contexts: list[list[str]] = []

    def chat(
        self,
        *,
        chat_ctx: llm.ChatContext,
        tools: list[llm.Tool] | None = None,
        conn_options: APIConnectOptions = DEFAULT_API_CONNECT_OPTIONS,
        **_: Any,
    ) -> llm.LLMStream:
        return ScriptedStream(self, chat_ctx=chat_ctx, tools=tools or [], conn_options=conn_options)


async def call(memory: VoiceMemory, user_turns: list[str]) -> list[list[str]]:
    """One call: each user turn run through the agent session; the LLM context of each."""
    model = ScriptedLLM()
    async with model, AgentSession(llm=model) as session:
        await session.start(MemoryAgent(memory=memory, instructions=INSTRUCTIONS))
        for text in user_turns:
            result = await session.run(user_input=text)
            result.expect.contains_message(role="assistant")
            # The pause before the user speaks again, in which the turns are ingested.
            await memory.ingested()
    await memory.aclose()
    return model.contexts


async def test_memory_carries_across_calls_honours_do_not_mention_and_survives_a_gateway_stop(
    mesh: Mesh, caplog: pytest.LogCaptureFixture
) -> None:
    await calls_of_one_user(mesh, call, caplog)
