"""A real Pipecat pipeline (Pipeline, PipelineTask, PipelineRunner; text frames as the STT's
output, a scripted LLM) with memmesh memory, against the engines as real processes, over
several calls of one user."""

from __future__ import annotations

import asyncio

import pytest
from conftest import calls_of_one_user
from pipecat.frames.frames import (
    EndFrame,
    LLMContextFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    TranscriptionFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.runner import PipelineRunner
from pipecat.pipeline.task import PipelineTask
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.turns.user_start import TranscriptionUserTurnStartStrategy
from pipecat.turns.user_stop import SpeechTimeoutUserTurnStopStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies

from memmesh.runtime.supervisor import Mesh
from memmesh.voice.pipecat_memory import MemmeshMemoryService, message_text
from memmesh.voice.turns import VoiceMemory

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SYSTEM_PROMPT = "You are a friendly voice assistant."
REPLY = "Sure, let me think about that."


class ScriptedLLM(FrameProcessor):
    """Stands in for the model: records the context of each turn and answers one line."""

    def __init__(self) -> None:
        super().__init__()
        self.contexts: list[list[str]] = []
        self.answered: asyncio.Queue[int] = asyncio.Queue()

    async def process_frame(self, frame: object, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)  # type: ignore[arg-type]
        if isinstance(frame, LLMContextFrame):
            self.contexts.append([message_text(m) for m in frame.context.get_messages()])
            await self.push_frame(LLMFullResponseStartFrame())
            await self.push_frame(LLMTextFrame(REPLY))
            await self.push_frame(LLMFullResponseEndFrame())
            await self.answered.put(len(self.contexts))
        else:
            await self.push_frame(frame, direction)  # type: ignore[arg-type]


async def call(memory: VoiceMemory, user_turns: list[str]) -> list[list[str]]:
    """One call through the pipeline; the LLM context of each user turn."""
    context = LLMContext([{"role": "system", "content": SYSTEM_PROMPT}])
    # Text stands in for audio: a transcription starts the user's turn, a short silence ends it.
    strategies = UserTurnStrategies(
        start=[TranscriptionUserTurnStartStrategy()],
        stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.05)],
    )
    aggregators = LLMContextAggregatorPair(
        context, user_params=LLMUserAggregatorParams(user_turn_strategies=strategies)
    )
    llm = ScriptedLLM()
    pipeline = Pipeline(
        [aggregators.user(), MemmeshMemoryService(memory), llm, aggregators.assistant()]
    )
    task = PipelineTask(pipeline)
    running = asyncio.create_task(PipelineRunner(handle_sigint=False).run(task))
    for text in user_turns:
        await task.queue_frame(
            TranscriptionFrame(text=text, user_id="caller", timestamp="", finalized=True)
        )
        await asyncio.wait_for(llm.answered.get(), 60)
        # The pause before the user speaks again, in which the turns are ingested.
        await memory.ingested()
    await task.queue_frame(EndFrame())
    await asyncio.wait_for(running, 60)
    return llm.contexts


async def test_memory_carries_across_calls_honours_do_not_mention_and_survives_a_gateway_stop(
    mesh: Mesh, caplog: pytest.LogCaptureFixture
) -> None:
    await calls_of_one_user(mesh, call, caplog)
