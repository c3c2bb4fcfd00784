"""Packaging (seed 001 §2.4.4): the user's STT adaptation artifact as canonical JSON, hashed
and signed with the publisher's Ed25519 key. The artifact is never stored: it is rebuilt
from the sealed capsule, and only its hash and version are kept (so a version number is
given to one content only)."""

from __future__ import annotations

import hashlib

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from memmesh.device.learning_packages import (
    ARTIFACT_FORMAT,
    SignedPackage,
    canonical_artifact,
    key_id_of,
    signed_message,
)
from memmesh.engines.atom_extractor.learning.profile import Hints


class PackageSigner:
    def __init__(self, seed: bytes) -> None:
        if len(seed) != 32:
            raise ValueError("an Ed25519 seed is 32 bytes")
        self._key = Ed25519PrivateKey.from_private_bytes(seed)
        self.public_key = self._key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.key_id = key_id_of(self.public_key)

    def sign(self, package_id: str, version: int, artifact: bytes) -> SignedPackage:
        sha256 = hashlib.sha256(artifact).hexdigest()
        signature = self._key.sign(signed_message(package_id, version, sha256))
        return SignedPackage(package_id, version, artifact, sha256, signature, self.key_id)


def package_id_of(pseudonym: str) -> str:
    """One artifact line per user, named by a pseudonym (no user id on the wire to devices)."""
    return f"stt:{pseudonym[:32]}"


def stt_artifact(package_id: str, version: int, hints: Hints) -> bytes:
    """The bounded STT adaptation artifact: phrase hints and heard -> meant pairs."""
    return canonical_artifact(
        {
            "format": ARTIFACT_FORMAT,
            "package_id": package_id,
            "version": version,
            "phrase_hints": list(hints.vocabulary),
            "pairs": [[heard, meant] for heard, meant in hints.pairs],
        }
    )


def content_hash(hints: Hints) -> str:
    """What decides whether a new version is due (independent of the version number)."""
    return hashlib.sha256(stt_artifact("", 0, hints)).hexdigest()
