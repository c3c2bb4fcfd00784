"""Signed learning packages (seed 001 §2.4.4) on the device: verify, apply in a deterministic
order, never twice, and roll back to the previous version.

A package is a versioned artifact (canonical JSON bytes), its SHA-256 and an Ed25519
signature over the package id, the version and that hash. The device pins the publisher's
public key; a package whose hash or signature does not check out, or whose artifact names
another package or version, is refused before anything is stored."""

from __future__ import annotations

import enum
import hashlib
import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from memmesh.device.crypto import associated_data
from memmesh.device.device_db import transaction

ARTIFACT_FORMAT = "memmesh.stt-adaptation/1"


class PackageRefused(Exception):
    """A package failed verification (tampered, misnamed or signed by another key)."""


class PackageAction(enum.StrEnum):
    APPLIED = "APPLIED"
    ROLLED_BACK = "ROLLED_BACK"


@dataclass(frozen=True)
class SignedPackage:
    package_id: str
    version: int
    artifact: bytes
    sha256: str
    signature: bytes
    key_id: str


@dataclass(frozen=True)
class PackageEvent:
    """What the device did, to be recorded on the ledger (idempotent by all four fields)."""

    package_id: str
    version: int
    action: PackageAction
    sha256: str


def signed_message(package_id: str, version: int, sha256: str) -> bytes:
    """The bytes an Ed25519 signature covers (length-prefixed, so fields cannot slide)."""
    return associated_data("memmesh-learning-package", package_id, version, sha256)


def canonical_artifact(body: dict[str, object]) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def key_id_of(public_key: bytes) -> str:
    return "ed25519:" + hashlib.sha256(public_key).hexdigest()[:16]


def verify(package: SignedPackage, public_key: bytes) -> dict[str, object]:
    """The artifact's body once hash, signature and naming all check out; else PackageRefused."""
    if hashlib.sha256(package.artifact).hexdigest() != package.sha256:
        raise PackageRefused("artifact hash does not match")
    if package.key_id != key_id_of(public_key):
        raise PackageRefused("package is signed by an unknown key")
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(
            package.signature, signed_message(package.package_id, package.version, package.sha256)
        )
    except InvalidSignature as failure:
        raise PackageRefused("signature does not verify") from failure
    body = json.loads(package.artifact)
    if not isinstance(body, dict) or body.get("format") != ARTIFACT_FORMAT:
        raise PackageRefused("unknown artifact format")
    if body.get("package_id") != package.package_id or body.get("version") != package.version:
        raise PackageRefused("artifact names another package or version")
    return body


class PackageApplier:
    """The applied packages of one device, in its device file; at most one version of each
    package active (the highest applied one not rolled back)."""

    def __init__(self, db: sqlite3.Connection, public_key: bytes) -> None:
        self._db = db
        self._public_key = public_key

    def apply(self, packages: Iterable[SignedPackage]) -> list[PackageEvent]:
        """Verify every package first, then apply them in (package id, version) order; a
        version applied before (or older than the active one) is skipped, so applying a
        batch twice applies it once. Returns the new APPLIED events, in apply order."""
        batch = sorted(packages, key=lambda p: (p.package_id, p.version))
        for package in batch:
            verify(package, self._public_key)
        events = []
        with transaction(self._db):
            for package in batch:
                known = self._db.execute(
                    "SELECT 1 FROM learning_packages WHERE package_id = ? AND version = ?",
                    (package.package_id, package.version),
                ).fetchone()
                active = self.active_version(package.package_id)
                if known is not None or (active is not None and package.version < active):
                    continue
                self._db.execute(
                    "INSERT INTO learning_packages (package_id, version, sha256, artifact, rolled_back) "
                    "VALUES (?, ?, ?, ?, 0)",
                    (package.package_id, package.version, package.sha256, package.artifact),
                )
                events.append(
                    PackageEvent(
                        package.package_id, package.version, PackageAction.APPLIED, package.sha256
                    )
                )
        return events

    def rollback(self, package_id: str) -> PackageEvent | None:
        """Roll the active version back: the previous applied version becomes active again.
        None when nothing of the package is active."""
        with transaction(self._db):
            row = self._db.execute(
                "SELECT version, sha256 FROM learning_packages WHERE package_id = ? "
                "AND rolled_back = 0 ORDER BY version DESC LIMIT 1",
                (package_id,),
            ).fetchone()
            if row is None:
                return None
            self._db.execute(
                "UPDATE learning_packages SET rolled_back = 1 WHERE package_id = ? AND version = ?",
                (package_id, int(row[0])),
            )
        return PackageEvent(package_id, int(row[0]), PackageAction.ROLLED_BACK, str(row[1]))

    def active_version(self, package_id: str) -> int | None:
        row = self._db.execute(
            "SELECT MAX(version) FROM learning_packages WHERE package_id = ? AND rolled_back = 0",
            (package_id,),
        ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def active_artifact(self, package_id: str) -> dict[str, object] | None:
        """The body of the active version, or None."""
        version = self.active_version(package_id)
        if version is None:
            return None
        row = self._db.execute(
            "SELECT artifact FROM learning_packages WHERE package_id = ? AND version = ?",
            (package_id, version),
        ).fetchone()
        body: dict[str, object] = json.loads(bytes(row[0]))
        return body
