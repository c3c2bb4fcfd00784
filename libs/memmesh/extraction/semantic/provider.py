"""An OpenAI-compatible /chat/completions client on the standard library (urllib in a thread)."""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass


@dataclass(frozen=True)
class ProviderConfig:
    """Where the provider is and the guardrails of each call."""

    name: str
    base_url: str
    api_key: str
    models: tuple[str, ...]
    timeout_s: float
    retries: int
    max_tokens: int
    turn_token_budget: int
    # Credentials and INTERNAL_ONLY spans are taken out of every turn before it is sent
    # (redaction.py). Off only to debug a local model; MEMMESH_ENV=production refuses it.
    redact: bool = True


@dataclass(frozen=True)
class ProviderReply:
    """The reply's message content and the tokens it cost."""

    content: str
    total_tokens: int


class ProviderTimeout(Exception):
    """No reply within the timeout."""


class ProviderError(Exception):
    """The provider answered with an error, or with an envelope that is not chat-completions."""


class ChatCompletionsProvider:
    """POSTs to {base_url}/chat/completions; temperature 0 and JSON mode for stable output."""

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config

    async def complete(self, messages: list[dict[str, str]], model: str) -> ProviderReply:
        """One call; raise ProviderTimeout or ProviderError."""
        return await asyncio.to_thread(self._post, messages, model)

    def _post(self, messages: list[dict[str, str]], model: str) -> ProviderReply:
        body = json.dumps(
            {
                "model": model,
                "messages": messages,
                "max_tokens": self.config.max_tokens,
                "temperature": 0,
                "response_format": {"type": "json_object"},
            }
        ).encode()
        headers = {"Content-Type": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        request = urllib.request.Request(
            self.config.base_url.rstrip("/") + "/chat/completions",
            data=body,
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.config.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            raise ProviderError(f"HTTP {error.code}") from error
        except TimeoutError as error:
            raise ProviderTimeout(str(error)) from error
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError | socket.timeout):
                raise ProviderTimeout(str(error.reason)) from error
            raise ProviderError(f"unreachable: {error.reason}") from error
        return _reply_of(raw)


def _reply_of(raw: bytes) -> ProviderReply:
    try:
        envelope = json.loads(raw)
        content = envelope["choices"][0]["message"]["content"]
        usage = envelope.get("usage") or {}
        total = int(usage.get("total_tokens", 0))
    except (ValueError, KeyError, IndexError, TypeError) as bad:
        raise ProviderError("reply is not a chat-completions envelope") from bad
    if not isinstance(content, str):
        raise ProviderError("message content is not text")
    return ProviderReply(content=content, total_tokens=total)
