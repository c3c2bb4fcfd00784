"""The semantic path never sends credentials or INTERNAL_ONLY sentences to the model
provider: a real HTTP provider on loopback records every request, and the test reads what
it received. Production refuses a provider with redaction off."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memmesh.engines.atom_extractor.adapters.rules_extractor import DeterministicExtractor
from memmesh.engines.atom_extractor.adapters.semantic_extractor import SemanticExtractor
from memmesh.engines.atom_extractor.domain.capsule import TurnInput
from memmesh.engines.atom_extractor.main import turn_extractor
from memmesh.engines.atom_extractor.settings import AtomExtractorSettings
from memmesh.extraction.semantic.provider import ChatCompletionsProvider, ProviderConfig
from memmesh.extraction.semantic.redaction import redact
from memmesh.runtime.engine import UnsafeConfiguration
from memmesh.runtime.settings import MeshSettings

NOW = 1_767_225_600_000_000
# Every secret below must never reach the provider; the rest of the turn should.
SECRETS = {
    "password": ("My email password is hunter2!", "hunter2"),
    "pin": ("my bank pin 4921", "4921"),
    "card": ("the card is 4111 1111 1111 1111", "4111 1111 1111 1111"),
    "iban": ("pay rent to GB82 WEST 1234 5698 7654 32 each month", "GB82 WEST 1234"),
    "api_key": ("use sk-live0a1b2c3d4e5f6g7h8i9j0 for the bot", "sk-live0a1b2c3d4e5f6g7h8i9j0"),
    "door_code": ("The garage code is 7721.", "7721"),
    "ssn": ("my social is 078-05-1120", "078-05-1120"),
    "token": ("recovery string Zq8vR2mN5xT1wK7pL3sD9f", "Zq8vR2mN5xT1wK7pL3sD9f"),
}
KEPT = "I have a sister named Sarah who lives in Porto."


class LoopbackProvider:
    """An OpenAI-compatible endpoint that records the messages of every request."""

    def __init__(self) -> None:
        self.received: list[list[dict[str, str]]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                recorder.received.append(body["messages"])
                reply = json.dumps(
                    {
                        "choices": [{"message": {"content": json.dumps({"relevant": False})}}],
                        "usage": {"total_tokens": 50},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def user_texts(self) -> list[str]:
        return [m["content"] for messages in self.received for m in messages if m["role"] == "user"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def provider() -> Iterator[LoopbackProvider]:
    loopback = LoopbackProvider()
    yield loopback
    loopback.close()


def config(url: str, *, redact: bool = True) -> ProviderConfig:
    return ProviderConfig(
        name="loopback",
        base_url=url,
        api_key="",
        models=("model-a",),
        timeout_s=2.0,
        retries=0,
        max_tokens=200,
        turn_token_budget=3000,
        redact=redact,
    )


def extractor(url: str, env: str = "development", *, redact: bool = True) -> SemanticExtractor:
    return SemanticExtractor(
        ChatCompletionsProvider(config(url, redact=redact)),
        DeterministicExtractor(),
        MeshSettings(env=env, tls_dir=None),
    )


def turn(text: str, turn_id: str = "t1") -> TurnInput:
    return TurnInput(turn_id, "s1", "user", text)


@pytest.mark.parametrize("kind", sorted(SECRETS))
async def test_the_provider_never_receives_a_credential(
    provider: LoopbackProvider, kind: str
) -> None:
    said, secret = SECRETS[kind]
    await extractor(provider.url).extract("t", "u", turn(f"{KEPT} {said}"), NOW)
    [sent] = provider.user_texts()
    assert secret not in sent and secret.replace(" ", "") not in sent.replace(" ", "")
    assert "[REDACTED:" in sent
    assert KEPT in sent  # what is not a credential still reaches the model


async def test_a_turn_of_credentials_only_is_never_sent(provider: LoopbackProvider) -> None:
    result, record = await extractor(provider.url).extract(
        "t", "u", turn("My password is hunter2."), NOW
    )
    assert provider.received == [] and record is None
    assert not result.facts


async def test_an_internal_only_sentence_goes_whole(provider: LoopbackProvider) -> None:
    # No value shape to find: the classifier's INTERNAL_ONLY verdict removes the sentence.
    text = f"{KEPT} The alarm code is the year my dad was born."
    await extractor(provider.url).extract("t", "u", turn(text), NOW)
    [sent] = provider.user_texts()
    assert "year my dad was born" not in sent and "alarm" not in sent
    assert KEPT in sent


async def test_ordinary_numbers_and_versions_reach_the_model(provider: LoopbackProvider) -> None:
    text = "I run 5 km every day and I use Python 3.11 at work."
    await extractor(provider.url).extract("t", "u", turn(text), NOW)
    assert provider.user_texts() == [f"Input:\n{text}"]


def test_redaction_keeps_every_character_it_does_not_replace() -> None:
    text = "First line.\nSecond: version 3.11! Third; the end"
    assert redact(text).text == text and not redact(text).changed


async def test_with_redaction_off_the_turn_is_sent_as_is_in_development(
    provider: LoopbackProvider,
) -> None:
    await extractor(provider.url, redact=False).extract("t", "u", turn("my pin 4921"), NOW)
    assert provider.user_texts() == ["Input:\nmy pin 4921"]


def test_production_refuses_a_provider_with_redaction_off(provider: LoopbackProvider) -> None:
    with pytest.raises(UnsafeConfiguration, match="redaction off"):
        extractor(provider.url, "production", redact=False)
    # With redaction on, the provider itself is no reason to refuse.
    extractor(provider.url, "production")


async def test_the_engine_wiring_redacts_by_default(
    provider: LoopbackProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMMESH_ENV", raising=False)
    settings = AtomExtractorSettings(mode="semantic_with_fallback", provider_base_url=provider.url)
    said, secret = SECRETS["password"]
    await turn_extractor(settings).extract("t", "u", turn(f"{KEPT} {said}"), NOW)
    [sent] = provider.user_texts()
    assert secret not in sent and KEPT in sent


def test_the_engine_wiring_refuses_redaction_off_in_production(
    provider: LoopbackProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMMESH_ENV", "production")
    settings = AtomExtractorSettings(
        mode="semantic_with_fallback", provider_base_url=provider.url, provider_redact=False
    )
    with pytest.raises(UnsafeConfiguration, match="redaction off"):
        turn_extractor(settings)
