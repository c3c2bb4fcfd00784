"""Settings of the Observer and the Reflector: environment variables with the
MEMMESH_OBSERVATION_ prefix. Model ids, limits and thresholds change without code."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from memmesh.extraction.semantic.provider import ProviderConfig
from memmesh.observation.prompts import PROMPTS


class ObservationSettings(BaseSettings):
    """Every default runs without a model provider (the deterministic rules only)."""

    model_config = SettingsConfigDict(env_prefix="MEMMESH_OBSERVATION_", extra="ignore")

    # seed 004: semantic_with_fallback asks the model and falls back per batch; the default
    # needs no provider, so an embedded mesh runs as it is.
    mode: Literal["deterministic_only", "semantic_with_fallback"] = "deterministic_only"
    # An OpenAI-compatible endpoint: base URL up to (not including) /chat/completions.
    base_url: str = ""
    api_key: SecretStr = SecretStr("")
    provider_name: str = "openai-compatible"
    # seed 004: a low-cost default profile; each role's model is swapped on its own.
    observer_model: str = "minimax-m2.5"
    reflector_model: str = "minimax-m2.5"
    timeout_s: float = Field(default=8.0, gt=0)
    # Extra attempts after a timeout, a provider error or a rejected reply.
    max_retries: int = Field(default=2, ge=0, le=5)
    # Estimated prompt tokens of one call; a longer conversation is cut into chunks.
    max_input_tokens: int = Field(default=6000, ge=256)
    max_output_tokens: int = Field(default=800, ge=64)
    # Ceiling of prompt plus completion tokens spent on one batch over all its attempts.
    batch_token_budget: int = Field(default=24000, ge=512)
    # seed 004 triggers: the Observer runs once this many tokens of turns are unobserved,
    # the Reflector once a thread's observations reach this many tokens.
    message_threshold_tokens: int = Field(default=1200, ge=1)
    observation_threshold_tokens: int = Field(default=1600, ge=1)
    max_observations: int = Field(default=12, ge=1, le=50)
    prompt_version: str = "observation-2025.1"

    @field_validator("prompt_version")
    @classmethod
    def _known_prompt(cls, version: str) -> str:
        if version not in PROMPTS:
            raise ValueError(f"unknown prompt version {version!r}; known: {sorted(PROMPTS)}")
        return version

    def provider_config(self) -> ProviderConfig:
        """The chat-completions client's configuration (redaction always on)."""
        return ProviderConfig(
            name=self.provider_name,
            base_url=self.base_url,
            api_key=self.api_key.get_secret_value(),
            models=(self.observer_model, self.reflector_model),
            timeout_s=self.timeout_s,
            retries=self.max_retries,
            max_tokens=self.max_output_tokens,
            turn_token_budget=self.batch_token_budget,
        )
