"""The learning stores' part of the composition root: secrets from settings, store, service."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from pathlib import Path

from memmesh.device.crypto import derive_key
from memmesh.engines.atom_extractor.adapters.learning_store import SqlLearningStore
from memmesh.engines.atom_extractor.learning.envelope import Envelope
from memmesh.engines.atom_extractor.learning.keys import CapsuleKeys
from memmesh.engines.atom_extractor.learning.packages import PackageSigner
from memmesh.engines.atom_extractor.learning.ports import EventLedger
from memmesh.engines.atom_extractor.learning.service import LearningPolicy, LearningService
from memmesh.engines.atom_extractor.settings import AtomExtractorSettings
from memmesh.runtime.engine import refuse_unsafe
from memmesh.runtime.settings import MeshSettings

_DEV_SALT = b"memmesh-learning-development"


def learning_secrets(own: AtomExtractorSettings, mesh: MeshSettings) -> tuple[bytes, bytes]:
    """(master secret, Ed25519 seed); development derives unset ones from the internal token."""
    missing = [
        f"MEMMESH_ATOM_EXTRACTOR_{name.upper()} is unset"
        for name in ("learning_master_secret", "learning_signing_seed")
        if not getattr(own, name)
    ]
    refuse_unsafe(mesh, missing)
    fallback = mesh.internal_token.encode()
    master = (
        own.learning_master_secret.encode()
        if own.learning_master_secret
        else derive_key(fallback, _DEV_SALT, "learning-master")
    )
    seed = (
        base64.b64decode(own.learning_signing_seed)
        if own.learning_signing_seed
        else derive_key(fallback, _DEV_SALT, "learning-signing")
    )
    return master, seed


async def learning_service(
    own: AtomExtractorSettings, mesh: MeshSettings, ledger: EventLedger
) -> tuple[LearningService, SqlLearningStore]:
    master, seed = learning_secrets(own, mesh)
    store = await SqlLearningStore.open(mesh.storage_url, mesh.data_dir)
    policy = LearningPolicy(
        caps=own.learning_caps(),
        k_threshold=own.learning_k_threshold,
        private_name_tenants=own.private_name_tenants(),
        pseudonym_secret=derive_key(master, _DEV_SALT, "learning-pseudonyms"),
    )
    service = LearningService(store, Envelope(master), PackageSigner(seed), ledger, policy)
    return service, store


def capsule_keys(
    own: AtomExtractorSettings, mesh: MeshSettings, store: SqlLearningStore
) -> CapsuleKeys:
    """The learning capsule's data keys, for the capsule store's correction pairs."""
    return CapsuleKeys(store, Envelope(learning_secrets(own, mesh)[0]))


async def capsule_keys_of_settings(
    storage_url: str, data_dir: Path
) -> tuple[CapsuleKeys, Callable[[], Awaitable[None]]]:
    """The keys over a learning store of its own (closed by the returned call), for a capsule
    store opened without the engine's."""
    store = await SqlLearningStore.open(storage_url, data_dir)
    return capsule_keys(AtomExtractorSettings(), MeshSettings(), store), store.close
