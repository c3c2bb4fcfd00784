"""Learning packages on the device: verified before anything is stored (hash, signature,
signing key, naming), applied in (package, version) order, never twice, rolled back to the
previous version."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from memmesh.device.device_db import open_device_db
from memmesh.device.learning_packages import (
    ARTIFACT_FORMAT,
    PackageAction,
    PackageApplier,
    PackageRefused,
    SignedPackage,
    canonical_artifact,
    key_id_of,
    signed_message,
    verify,
)

SIGNER = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
PUBLIC = SIGNER.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def package(version: int, pairs: list[list[str]], package_id: str = "stt:abc") -> SignedPackage:
    artifact = canonical_artifact(
        {"format": ARTIFACT_FORMAT, "package_id": package_id, "version": version, "pairs": pairs}
    )
    sha256 = hashlib.sha256(artifact).hexdigest()
    signature = SIGNER.sign(signed_message(package_id, version, sha256))
    return SignedPackage(package_id, version, artifact, sha256, signature, key_id_of(PUBLIC))


@pytest.fixture
def applier(tmp_path: Path) -> PackageApplier:
    return PackageApplier(open_device_db(tmp_path / "device.sqlite3"), PUBLIC)


def test_a_genuine_package_verifies() -> None:
    assert verify(package(1, [["a", "b"]]), PUBLIC)["pairs"] == [["a", "b"]]


def _resigned_artifact(original: SignedPackage, artifact: bytes) -> SignedPackage:
    """The artifact swapped and its hash recomputed, the old signature kept."""
    return replace(original, artifact=artifact, sha256=hashlib.sha256(artifact).hexdigest())


@pytest.mark.parametrize(
    "tamper",
    [
        lambda p: replace(p, artifact=p.artifact.replace(b'"a"', b'"z"')),
        lambda p: _resigned_artifact(p, p.artifact.replace(b'"a"', b'"z"')),
        lambda p: replace(p, version=p.version + 1),
        lambda p: replace(p, signature=bytes(64)),
        lambda p: replace(p, key_id="ed25519:0000000000000000"),
    ],
)
def test_a_tampered_package_is_refused_and_nothing_is_applied(
    applier: PackageApplier, tamper: object
) -> None:
    bad = tamper(package(1, [["a", "b"]]))  # type: ignore[operator]
    with pytest.raises(PackageRefused):
        applier.apply([package(1, [["c", "d"]], "stt:other"), bad])
    assert applier.active_version("stt:abc") is None
    assert applier.active_version("stt:other") is None


def test_a_package_signed_by_another_key_is_refused(tmp_path: Path) -> None:
    other = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    with pytest.raises(PackageRefused):
        verify(package(1, []), other)


def test_an_artifact_naming_another_version_is_refused() -> None:
    genuine = package(2, [])
    relabelled = package(1, [])
    mixed = replace(
        relabelled,
        artifact=genuine.artifact,
        sha256=genuine.sha256,
        signature=SIGNER.sign(signed_message("stt:abc", 1, genuine.sha256)),
    )
    with pytest.raises(PackageRefused, match="another package or version"):
        verify(mixed, PUBLIC)


def test_apply_order_is_deterministic_and_applying_twice_applies_once(
    applier: PackageApplier,
) -> None:
    v1, v2 = package(1, [["a", "b"]]), package(2, [["a", "c"]])
    events = applier.apply([v2, v1])
    assert [(e.version, e.action) for e in events] == [
        (1, PackageAction.APPLIED),
        (2, PackageAction.APPLIED),
    ]
    assert applier.apply([v1, v2]) == []
    assert applier.active_artifact("stt:abc")["pairs"] == [["a", "c"]]  # type: ignore[index]


def test_rollback_restores_the_previous_version_and_an_older_one_is_not_reapplied(
    applier: PackageApplier,
) -> None:
    applier.apply([package(1, [["a", "b"]])])
    applier.apply([package(2, [["a", "c"]])])
    event = applier.rollback("stt:abc")
    assert event is not None and (event.version, event.action) == (2, PackageAction.ROLLED_BACK)
    assert applier.active_version("stt:abc") == 1
    assert applier.active_artifact("stt:abc")["pairs"] == [["a", "b"]]  # type: ignore[index]
    # The rolled-back version is not applied again by a replayed batch.
    assert applier.apply([package(2, [["a", "c"]])]) == []
    assert applier.active_version("stt:abc") == 1
    assert applier.rollback("stt:abc") is not None
    assert applier.rollback("stt:abc") is None
    assert applier.active_artifact("stt:abc") is None
