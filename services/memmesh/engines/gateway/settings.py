"""Gateway settings: environment variables with the MEMMESH_GATEWAY_ prefix."""

from __future__ import annotations

import os

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class GatewaySettings(BaseSettings):
    """Tenant keys and per-turn budgets; every default runs on a bare machine."""

    model_config = SettingsConfigDict(env_prefix="MEMMESH_GATEWAY_", extra="ignore")

    # Tenant -> key, as JSON in MEMMESH_GATEWAY_TENANT_KEYS; the default serves `make run`.
    tenant_keys: dict[str, str] = Field(default_factory=lambda: {"demo": "demo-key"})
    # Latency budget of one Brief; every engine call gets a deadline from what is left.
    brief_budget_ms: int = Field(default=40, gt=0)
    # Briefs composed at the same time (default: this host's CPU count); more wait, within
    # their budget, so an overloaded mesh finishes some turns instead of timing out on all.
    brief_concurrency: int = Field(default_factory=lambda: os.cpu_count() or 2, gt=0)
    # Budget of one Ingest (archive, then the first attempt of its effects).
    ingest_budget_ms: int = Field(default=2000, gt=0)
    # Budget of Command, OpenSession, CloseSession and Remember.
    control_budget_ms: int = Field(default=2000, gt=0)
    # Turn time after which a user turn of the same session records the interaction in
    # Current State again (the first turn of each session always does; 0: every turn).
    interaction_refresh_s: float = Field(default=60.0, ge=0)
    # Deadline of one attempt of an effect (index, interaction, extraction, profile fill);
    # what does not finish in time stays queued in the outbox.
    effect_attempt_ms: int = Field(default=500, gt=0)
    # Backoff of queued effects: first delay, doubled per failed attempt, capped.
    retry_initial_s: float = Field(default=0.2, gt=0)
    retry_max_s: float = Field(default=30.0, gt=0)
    # Failed attempts before an effect moves to the dead letters (about 50 minutes at the cap).
    effect_max_attempts: int = Field(default=100, gt=0)
    # Per-turn measurement events (seed 001 §2.12): a JSON-lines file, relative paths under
    # the data dir; "" turns measurement off. Write-only: nothing reads it back.
    measurement_log: str = "measurement.jsonl"
