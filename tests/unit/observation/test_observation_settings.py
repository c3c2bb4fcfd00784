"""Settings come from MEMMESH_OBSERVATION_* variables; models swap without code."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from memmesh.observation import ObservationSettings


def test_defaults_need_no_provider() -> None:
    settings = ObservationSettings()
    assert settings.mode == "deterministic_only" and settings.base_url == ""


def test_models_and_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMMESH_OBSERVATION_MODE", "semantic_with_fallback")
    monkeypatch.setenv("MEMMESH_OBSERVATION_OBSERVER_MODEL", "small-model")
    monkeypatch.setenv("MEMMESH_OBSERVATION_REFLECTOR_MODEL", "big-model")
    monkeypatch.setenv("MEMMESH_OBSERVATION_MAX_RETRIES", "1")
    monkeypatch.setenv("MEMMESH_OBSERVATION_API_KEY", "sk-secret")
    settings = ObservationSettings()
    assert (settings.observer_model, settings.reflector_model) == ("small-model", "big-model")
    assert settings.max_retries == 1 and settings.mode == "semantic_with_fallback"
    assert "sk-secret" not in repr(settings)
    assert settings.provider_config().api_key == "sk-secret"


def test_an_unknown_prompt_version_is_refused() -> None:
    with pytest.raises(ValidationError, match="unknown prompt version"):
        ObservationSettings(prompt_version="observation-1999")
