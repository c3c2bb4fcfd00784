"""ExposureGuard's own settings (env prefix MEMMESH_EXPOSURE_GUARD_); mesh-wide ones are in MeshSettings."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ExposureGuardSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMMESH_EXPOSURE_GUARD_", extra="ignore")

    # Every rule change rewrites the cached rule set; the TTL only bounds a missed write.
    rules_cache_ttl_s: int = Field(default=300, gt=0)
    # Compiled rule sets kept in this process, keyed by their content.
    compiled_cache_entries: int = Field(default=4096, gt=0)
