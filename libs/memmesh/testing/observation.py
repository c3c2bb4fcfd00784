"""Observation settings that ask the fake provider (tests only)."""

from __future__ import annotations

from typing import Any

from memmesh.observation import ObservationSettings
from memmesh.testing.fake_provider import FakeProvider


def semantic_settings(fake: FakeProvider, api_key: str, **overrides: Any) -> ObservationSettings:
    """`semantic_with_fallback` against the fake: provider "fake", models "observer-model"
    and "reflector-model", a 2 s timeout and one retry unless overridden."""
    values: dict[str, Any] = {
        "mode": "semantic_with_fallback",
        "base_url": fake.url,
        "api_key": api_key,
        "provider_name": "fake",
        "observer_model": "observer-model",
        "reflector_model": "reflector-model",
        "timeout_s": 2.0,
        "max_retries": 1,
    }
    return ObservationSettings(**(values | overrides))
