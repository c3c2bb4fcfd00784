"""The bounded ask-validate-retry loop both roles share (seed 004 guardrails): a token budget
checked before every call, a timeout per call and one for the whole batch, capped retries
whose messages say what was wrong, and a reason code when the rules must answer instead."""

from __future__ import annotations

import asyncio
import http.client
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, Protocol, TypeVar

from memmesh.extraction.semantic.parsing import DegenerateOutput, MalformedOutput
from memmesh.extraction.semantic.provider import (
    ProviderConfig,
    ProviderError,
    ProviderReply,
    ProviderTimeout,
)
from memmesh.observation.canonical import estimated_tokens
from memmesh.observation.model import FallbackReason, Provenance
from memmesh.observation.prompts import Messages, with_guidance
from memmesh.observation.validation import UngroundedOutput

T = TypeVar("T")


class Provider(Protocol):
    """An OpenAI-compatible chat-completions client (ChatCompletionsProvider)."""

    config: ProviderConfig

    async def complete(self, messages: list[dict[str, str]], model: str) -> ProviderReply: ...


class Decision(Enum):
    RETRY = "retry"
    FALLBACK = "fallback"


# A reply the model can fix when told what was wrong with it.
_CORRECTABLE = frozenset(
    {
        FallbackReason.INVALID_OUTPUT,
        FallbackReason.DEGENERATE_OUTPUT,
        FallbackReason.UNGROUNDED_OUTPUT,
    }
)


def decide(
    failure: FallbackReason, attempts: int, max_attempts: int, remaining_s: float
) -> Decision:
    """After a failed attempt: retry while attempts and time are left, unless the budget is spent."""
    if failure is FallbackReason.BUDGET_EXCEEDED or attempts >= max_attempts or remaining_s <= 0:
        return Decision.FALLBACK
    return Decision.RETRY


def needs_guidance(failure: FallbackReason) -> bool:
    """Whether the retry carries the rejected reply and what was wrong with it."""
    return failure in _CORRECTABLE


@dataclass(frozen=True)
class Run:
    """Who answered a batch and how: what its provenance records besides the hashes."""

    provider: str
    model: str
    prompt_version: str
    attempts: int = 0
    reason: FallbackReason | None = None

    def provenance(self, input_hash: str, output_hash: str, started: float) -> Provenance:
        """The provenance of the batch, its latency measured from `started` (monotonic)."""
        return Provenance(
            provider=self.provider,
            model=self.model,
            prompt_version=self.prompt_version,
            input_hash=input_hash,
            output_hash=output_hash,
            # Measured, never used in a decision.
            latency_ms=int((time.monotonic() - started) * 1000),
            attempt_count=self.attempts,
            fallback_used=self.reason is not None,
            fallback_reason=self.reason.value if self.reason else "",
        )


@dataclass
class Outcome(Generic[T]):
    """What the loop got: the accepted value or None, and how it went."""

    provider: str
    model: str
    prompt_version: str
    value: T | None = None
    attempts: int = 0
    reason: FallbackReason | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def run(self) -> Run:
        """How the batch was answered: by the model, or by the rules after `reason`."""
        reason = self.reason if self.value is None else None
        return Run(self.provider, self.model, self.prompt_version, self.attempts, reason)


def messages_tokens(messages: Messages) -> int:
    """Estimated prompt tokens of chat messages."""
    return sum(estimated_tokens(m["content"]) + 4 for m in messages)


@dataclass(frozen=True)
class Limits:
    """The guardrails of one batch."""

    timeout_s: float
    max_attempts: int
    max_input_tokens: int
    max_output_tokens: int
    batch_token_budget: int


async def ask(
    provider: Provider,
    model: str,
    prompt_version: str,
    messages: Messages,
    accept: Callable[[str], T],
    limits: Limits,
) -> Outcome[T]:
    """Ask until `accept` takes a reply (it raises MalformedOutput, DegenerateOutput or
    UngroundedOutput otherwise) or the guardrails say fall back. Never raises for provider
    trouble: the outcome names the reason."""
    outcome: Outcome[T] = Outcome(provider.config.name, model, prompt_version)
    deadline = time.monotonic() + limits.timeout_s * limits.max_attempts
    spent = 0
    current = messages
    while True:
        prompt_tokens = messages_tokens(current)
        if (
            prompt_tokens > limits.max_input_tokens
            or spent + prompt_tokens + limits.max_output_tokens > limits.batch_token_budget
        ):
            outcome.reason = FallbackReason.BUDGET_EXCEEDED
            return outcome
        outcome.attempts += 1
        failure, reply = await _attempt(provider, model, current, accept, deadline, limits, outcome)
        if failure is None:
            return outcome
        spent += reply.total_tokens if reply and reply.total_tokens else prompt_tokens
        outcome.reason = failure
        remaining = deadline - time.monotonic()
        if decide(failure, outcome.attempts, limits.max_attempts, remaining) is Decision.FALLBACK:
            return outcome
        if reply is not None and needs_guidance(failure):
            current = with_guidance(
                messages, reply.content, outcome.problems[-1:], outcome.attempts
            )


async def _attempt(
    provider: Provider,
    model: str,
    messages: Messages,
    accept: Callable[[str], T],
    deadline: float,
    limits: Limits,
    outcome: Outcome[T],
) -> tuple[FallbackReason | None, ProviderReply | None]:
    """One call and its check: (None, reply) when accepted, else the failure."""
    timeout = min(limits.timeout_s, deadline - time.monotonic())
    try:
        reply = await asyncio.wait_for(
            provider.complete(messages, model), timeout=max(timeout, 0.001)
        )
    except (ProviderTimeout, TimeoutError):
        outcome.problems.append("no reply in time")
        return FallbackReason.TIMEOUT, None
    except (ProviderError, OSError, http.client.HTTPException) as error:
        outcome.problems.append(f"provider error: {type(error).__name__}")
        return FallbackReason.PROVIDER_ERROR, None
    try:
        outcome.value = accept(reply.content)
    except MalformedOutput as bad:
        failure, problem = FallbackReason.INVALID_OUTPUT, f"not the JSON asked for: {bad}"
    except DegenerateOutput as bad:
        failure, problem = FallbackReason.DEGENERATE_OUTPUT, str(bad)
    except UngroundedOutput as bad:
        failure, problem = FallbackReason.UNGROUNDED_OUTPUT, str(bad)
    else:
        return None, reply
    outcome.problems.append(problem)
    return failure, reply
