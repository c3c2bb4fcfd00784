"""The learning secrets: production refuses to start without its own; development derives
them from the internal token, so `make run` works on a bare machine."""

from __future__ import annotations

import base64

import pytest

from memmesh.engines.atom_extractor.learning.wiring import learning_secrets
from memmesh.engines.atom_extractor.settings import AtomExtractorSettings
from memmesh.runtime.engine import UnsafeConfiguration
from memmesh.runtime.settings import MeshSettings


def test_production_refuses_to_start_without_its_learning_secrets() -> None:
    mesh = MeshSettings(env="production", internal_token="a-production-token-of-length")
    with pytest.raises(UnsafeConfiguration, match="LEARNING_MASTER_SECRET"):
        learning_secrets(AtomExtractorSettings(), mesh)
    seed = bytes(range(32))
    own = AtomExtractorSettings(
        learning_master_secret="a production master secret",
        learning_signing_seed=base64.b64encode(seed).decode(),
    )
    assert learning_secrets(own, mesh) == (b"a production master secret", seed)


def test_development_derives_distinct_secrets_from_the_internal_token() -> None:
    master, seed = learning_secrets(AtomExtractorSettings(), MeshSettings(env="development"))
    assert len(master) == 32 and len(seed) == 32 and master != seed
    other = learning_secrets(
        AtomExtractorSettings(), MeshSettings(env="development", internal_token="another-token")
    )
    assert other[0] != master
