"""Settings of the AtomExtractor: environment variables with the MEMMESH_ATOM_EXTRACTOR_ prefix."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from memmesh.engines.atom_extractor.domain.freshness import FreshnessWindows
from memmesh.engines.atom_extractor.learning.profile import LearningCaps


class AtomExtractorSettings(BaseSettings):
    """Every default runs without a model provider (deterministic rules only)."""

    model_config = SettingsConfigDict(env_prefix="MEMMESH_ATOM_EXTRACTOR_", extra="ignore")

    # seed 004: the semantic path is optional; the rules are the default and the fallback.
    mode: Literal["deterministic_only", "semantic_with_fallback"] = "deterministic_only"
    # The embedded path: the rules with the learned clause head (what natural speech says
    # beyond the rules' patterns becomes memory), or the rules alone.
    embedded: Literal["hybrid", "rules"] = "hybrid"
    # seed 002 decay windows, in days.
    user_fact_window_days: int = Field(default=30, ge=1)
    user_pattern_window_days: int = Field(default=14, ge=1)
    shared_narrative_window_days: int = Field(default=7, ge=1)
    # An OpenAI-compatible endpoint: base URL up to (not including) /chat/completions.
    provider_base_url: str = ""
    provider_api_key: str = ""
    provider_name: str = "openai-compatible"
    # Model ids, comma-separated, tried in order when one fails.
    provider_models: str = "gpt-4o-mini"
    provider_timeout_s: float = Field(default=4.0, gt=0)
    # Extra attempts per model after a timeout, a provider error or malformed output.
    provider_retries: int = Field(default=1, ge=0, le=5)
    provider_max_tokens: int = Field(default=400, ge=16)
    # Ceiling of prompt plus completion tokens spent on one turn.
    provider_turn_token_budget: int = Field(default=3000, ge=64)
    # Credentials and INTERNAL_ONLY spans leave the turn before any provider call; off only
    # to debug a local model (MEMMESH_ENV=production refuses to start with it off).
    provider_redact: bool = True

    # The effect outbox: deadline of one attempt, backoff between attempts, attempts before
    # an effect goes to the dead letters.
    effect_attempt_s: float = Field(default=2.0, gt=0)
    effect_retry_initial_s: float = Field(default=0.2, gt=0)
    effect_retry_max_s: float = Field(default=30.0, gt=0)
    effect_max_attempts: int = Field(default=100, ge=1)
    # A forget reaches devices' copies through OutboxSync. Unset: on whenever the mesh names
    # OutboxSync's address (MEMMESH_OUTBOX_SYNC_ADDR, as every full mesh does), off for a
    # mesh without it (a warning says so at start).
    device_sync: bool | None = None

    # Learning stores (seed 001 §2.4). The master secret wraps every tenant's key that wraps
    # each user's capsule key; the signing seed (32 bytes, base64) signs learning packages.
    # Unset, both derive from the mesh's internal token (development only: production
    # refuses to start without them).
    learning_master_secret: str = ""
    learning_signing_seed: str = ""
    learning_max_pairs: int = Field(default=100, ge=1, le=1000)
    learning_max_vendors: int = Field(default=50, ge=1, le=1000)
    learning_max_terms: int = Field(default=100, ge=1, le=1000)
    learning_max_entry_chars: int = Field(default=64, ge=8, le=200)
    # Bytes of learned hints one Brief's Hint Bundle may carry.
    learning_hint_max_bytes: int = Field(default=4096, ge=64, le=16384)
    # A global signal is released only once this many distinct users contributed it.
    learning_k_threshold: int = Field(default=5, ge=2)
    # Tenants whose policy permits private names in their vocabulary pack, comma-separated.
    learning_private_name_tenants: str = ""

    def windows(self) -> FreshnessWindows:
        return FreshnessWindows(
            user_fact_days=self.user_fact_window_days,
            user_pattern_days=self.user_pattern_window_days,
            shared_narrative_days=self.shared_narrative_window_days,
        )

    def learning_caps(self) -> LearningCaps:
        return LearningCaps(
            max_pairs=self.learning_max_pairs,
            max_vendors=self.learning_max_vendors,
            max_terms=self.learning_max_terms,
            max_entry_chars=self.learning_max_entry_chars,
            hint_max_bytes=self.learning_hint_max_bytes,
        )

    def private_name_tenants(self) -> frozenset[str]:
        return frozenset(
            t.strip() for t in self.learning_private_name_tenants.split(",") if t.strip()
        )

    def model_ids(self) -> tuple[str, ...]:
        return tuple(m.strip() for m in self.provider_models.split(",") if m.strip())
