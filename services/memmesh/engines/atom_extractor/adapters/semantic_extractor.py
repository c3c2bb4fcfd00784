"""The semantic path with deterministic fallback and provenance per turn (seed 004)."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, replace
from typing import Protocol

from memmesh.engines.atom_extractor.domain.capsule import ProvenanceEntry, TurnInput
from memmesh.engines.atom_extractor.ports import TurnExtractor
from memmesh.extraction.gates import apply_gates
from memmesh.extraction.model import (
    Command,
    ExtractedFact,
    ExtractionResult,
    Rejection,
)
from memmesh.extraction.semantic.parsing import (
    DegenerateOutput,
    MalformedOutput,
    parse_reply,
)
from memmesh.extraction.semantic.prompt import (
    PROMPT_VERSION,
    build_messages,
    estimated_tokens,
    input_hash,
)
from memmesh.extraction.semantic.provider import (
    ProviderConfig,
    ProviderError,
    ProviderReply,
    ProviderTimeout,
)
from memmesh.extraction.semantic.redaction import only_placeholders, redact
from memmesh.runtime.engine import refuse_unsafe
from memmesh.runtime.settings import MeshSettings

MAX_FACTS = 5


class Provider(Protocol):
    config: ProviderConfig

    async def complete(self, messages: list[dict[str, str]], model: str) -> ProviderReply: ...


@dataclass
class _Attempts:
    count: int = 0
    tokens: int = 0
    output_hash: str = ""
    reason: str = ""
    model: str = ""
    rejections: tuple[Rejection, ...] = ()


class SemanticExtractor:
    """Asks the model; any failure, or proposals that all fail the gates, falls back to the rules."""

    def __init__(
        self, provider: Provider, fallback: TurnExtractor, settings: MeshSettings | None = None
    ) -> None:
        # A provider that would receive credentials is no production configuration.
        unredacted = [] if provider.config.redact else ["the model provider has redaction off"]
        refuse_unsafe(settings or MeshSettings(), unredacted)
        self._provider = provider
        self._fallback = fallback

    def forget_cached(self) -> None:
        # The provider keeps nothing here; the embedded path beneath may.
        self._fallback.forget_cached()

    async def extract(
        self, tenant_id: str, user_id: str, turn: TurnInput, now_us: int
    ) -> tuple[ExtractionResult, ProvenanceEntry | None]:
        rules, _ = await self._fallback.extract(tenant_id, user_id, turn, now_us)
        # Assistant turns never produce user facts, and a do-not-store turn never leaves the mesh.
        if turn.role != "user" or not turn.text.strip() or rules.command is Command.DO_NOT_STORE:
            return rules, None
        config = self._provider.config
        # Nothing leaves the mesh before redaction: the provider sees placeholders instead
        # of credentials and INTERNAL_ONLY sentences; the gates still check the user's words.
        outgoing = redact(turn.text).text if config.redact else turn.text
        if only_placeholders(outgoing):
            return rules, None
        messages = build_messages(outgoing)
        started = time.monotonic()  # latency is measured, never used in a decision
        state = _Attempts()
        accepted = await self._ask(messages, turn.text, state)
        latency_ms = int((time.monotonic() - started) * 1000)
        provenance = ProvenanceEntry(
            turn_id=turn.turn_id,
            provider=config.name,
            model=state.model,
            prompt_version=PROMPT_VERSION,
            input_hash=input_hash(messages),
            output_hash=state.output_hash,
            latency_ms=latency_ms,
            attempts=state.count,
            fallback_used=accepted is None,
            fallback_reason=state.reason if accepted is None else "",
            record_time_us=now_us,
        )
        if accepted is None:
            return replace(rules, rejections=(*rules.rejections, *state.rejections)), provenance
        facts = tuple(accepted[:MAX_FACTS])
        result = replace(
            rules,
            relevant=bool(facts),
            facts=facts,
            rejections=(*rules.rejections, *state.rejections),
        )
        return result, provenance

    async def _ask(
        self, messages: list[dict[str, str]], source: str, state: _Attempts
    ) -> list[ExtractedFact] | None:
        config = self._provider.config
        if estimated_tokens(messages) + config.max_tokens > config.turn_token_budget:
            state.reason = "budget_exceeded"
            return None
        for model in config.models:
            for _ in range(config.retries + 1):
                if (
                    state.tokens + estimated_tokens(messages) + config.max_tokens
                    > config.turn_token_budget
                ):
                    state.reason = "budget_exceeded"
                    return None
                state.count += 1
                state.model = model
                try:
                    reply = await self._provider.complete(messages, model)
                except ProviderTimeout:
                    state.reason = "timeout"
                    continue
                except ProviderError:
                    state.reason = "provider_error"
                    continue
                state.tokens += reply.total_tokens or estimated_tokens(messages) + config.max_tokens
                state.output_hash = hashlib.sha256(reply.content.encode()).hexdigest()
                try:
                    candidates = parse_reply(reply.content)
                except MalformedOutput:
                    state.reason = "invalid_output"
                    continue
                except DegenerateOutput:
                    state.reason = "degenerate_output"
                    continue
                accepted, rejections = apply_gates(candidates, source)
                state.rejections = tuple(rejections)
                if candidates and not accepted:
                    state.reason = "all_proposals_rejected"
                    return None
                return accepted
        return None
