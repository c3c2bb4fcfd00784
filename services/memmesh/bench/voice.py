"""What the Pipecat memory processor adds to a turn around its Brief.

A real Pipecat pipeline (user aggregator → MemmeshMemoryService → a scripted LLM) against
the multi-process mesh on SQLite; a user with a few facts talks in calls of 20 turns.
Per turn, the processor's handling of the LLM context frame is timed, and so is the
Brief call inside it; the difference is what the processor adds (finding the user's
words, rendering the bundle, replacing the memory message, queueing the Ingests).

`python -m memmesh.bench.voice` prints the figures as JSON.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
import uuid

from pipecat.frames.frames import (
    EndFrame,
    Frame,
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

from memmesh.bench.stats import summary
from memmesh.client.budget import TurnBudget
from memmesh.client.memory_client import GatewaySettings, MemoryClient
from memmesh.client.results import BriefResult
from memmesh.client.session import MemorySession
from memmesh.runtime.supervisor import Mesh, built_engines
from memmesh.voice.pipecat_memory import MemmeshMemoryService
from memmesh.voice.turns import VoiceMemory, VoiceMemorySettings

TENANT, KEY = "bench", "bench-key"
CALLS, TURNS_PER_CALL = 10, 20
FACTS = [
    "my sister Sarah lives in Chicago",
    "my brother Kwame is a pilot",
    "I'm allergic to peanuts",
    "I don't eat meat anymore",
    "I need to book the dentist",
]
QUESTIONS = [
    "what should I cook for my sister tonight?",
    "any ideas for my brother's birthday?",
    "remind me what I have to do this week",
    "what snacks should I bring to the party?",
]


class TimedMemoryClient(MemoryClient):
    """The real client, with each Brief's duration written down."""

    def __init__(self, settings: GatewaySettings) -> None:
        super().__init__(settings)
        self.brief_ms: list[float] = []

    async def brief(self, *args: object, **kwargs: object) -> BriefResult:
        started = time.perf_counter()
        try:
            return await super().brief(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            self.brief_ms.append((time.perf_counter() - started) * 1000)


class TimedMemoryService(MemmeshMemoryService):
    """The processor, with its handling of each LLM context frame timed."""

    def __init__(self, memory: VoiceMemory) -> None:
        super().__init__(memory)
        self.turn_ms: list[float] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        started = time.perf_counter()
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMContextFrame):
            self.turn_ms.append((time.perf_counter() - started) * 1000)


class ScriptedLLM(FrameProcessor):
    """Answers every context with one line, and says when it has."""

    def __init__(self) -> None:
        super().__init__()
        self.answered: asyncio.Queue[None] = asyncio.Queue()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if not isinstance(frame, LLMContextFrame):
            await self.push_frame(frame, direction)
            return
        for reply in (
            LLMFullResponseStartFrame(),
            LLMTextFrame("Sure."),
            LLMFullResponseEndFrame(),
        ):
            await self.push_frame(reply)
        self.answered.put_nowait(None)


async def one_call(client: TimedMemoryClient, user_id: str, turns: list[str]) -> list[float]:
    """One call through the pipeline; the processor's time per turn."""
    settings = VoiceMemorySettings(brief_budget_ms=2000)
    memory = VoiceMemory(MemorySession(client, user_id), settings)
    context = LLMContext([{"role": "system", "content": "You are a voice assistant."}])
    strategies = UserTurnStrategies(
        start=[TranscriptionUserTurnStartStrategy()],
        stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.01)],
    )
    aggregators = LLMContextAggregatorPair(
        context, user_params=LLMUserAggregatorParams(user_turn_strategies=strategies)
    )
    processor, llm = TimedMemoryService(memory), ScriptedLLM()
    task = PipelineTask(Pipeline([aggregators.user(), processor, llm, aggregators.assistant()]))
    running = asyncio.create_task(PipelineRunner(handle_sigint=False).run(task))
    for text in turns:
        await task.queue_frame(TranscriptionFrame(text=text, user_id=user_id, timestamp=""))
        await llm.answered.get()
        await memory.ingested()
    await task.queue_frame(EndFrame())
    await running
    return processor.turn_ms


async def measure(gateway_addr: str) -> dict[str, object]:
    """Calls of one user with memory; the processor's added time around each Brief."""
    user_id = f"bench-{uuid.uuid4().hex[:8]}"
    settings = GatewaySettings(addr=gateway_addr, tenant_key=KEY, tenant_id=TENANT)
    async with TimedMemoryClient(settings) as client:
        memory = MemorySession(client, user_id)
        for fact in FACTS:
            await memory.ingest("user", fact, TurnBudget.of_ms(10_000))
        await memory.close()
        client.brief_ms.clear()
        turn_ms: list[float] = []
        for _ in range(CALLS):
            turns = [QUESTIONS[i % len(QUESTIONS)] for i in range(TURNS_PER_CALL)]
            turn_ms += await one_call(client, user_id, turns)
        added = [turn - brief for turn, brief in zip(turn_ms, client.brief_ms, strict=True)]
    return {
        "processor_added_ms": summary(added),
        "brief_ms": summary(client.brief_ms),
        "processor_turn_ms": summary(turn_ms),
    }


def run() -> dict[str, object]:
    """Start the mesh on SQLite, measure, stop it."""
    with tempfile.TemporaryDirectory() as data_dir:
        env = {
            "MEMMESH_DATA_DIR": data_dir,
            "MEMMESH_STORAGE_URL": "sqlite",
            "MEMMESH_LOG_LEVEL": "WARNING",
            "MEMMESH_GATEWAY_TENANT_KEYS": f'{{"{TENANT}": "{KEY}"}}',
        }
        engines = [name for name in built_engines() if name != "outbox_sync"]
        with Mesh(engines, env=env) as mesh:
            return asyncio.run(measure(mesh.addrs["gateway"]))


if __name__ == "__main__":
    print(
        "Pipecat memory processor around a Brief, multi-process mesh [sqlite]: "
        + json.dumps(run(), sort_keys=True),
        flush=True,
    )
