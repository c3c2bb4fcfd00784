"""Use cases of the learning stores (seed 001 §2.4): learn from turns into the sealed
per-user capsule, serve its hints to a verified voice only, keep company packs guarded and
audited, release global signals past k only, and package and record signed artifacts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memmesh.device.learning_packages import PackageAction, SignedPackage
from memmesh.engines.atom_extractor.domain.capsule import digest
from memmesh.engines.atom_extractor.learning import vocabulary_pack as packs
from memmesh.engines.atom_extractor.learning.envelope import Envelope
from memmesh.engines.atom_extractor.learning.global_signals import (
    Released,
    contributor_of,
    generic_signals,
    releasable,
)
from memmesh.engines.atom_extractor.learning.packages import (
    PackageSigner,
    content_hash,
    package_id_of,
    stt_artifact,
)
from memmesh.engines.atom_extractor.learning.ports import EventLedger, LearningStore, SealedCapsule
from memmesh.engines.atom_extractor.learning.profile import (
    Hints,
    LearningCaps,
    LearningProfile,
    decode,
    encode,
    hints_of,
    merge,
    without_session,
    without_terms,
)
from memmesh.engines.atom_extractor.learning.rules import learn_from_turn
from memmesh.errors import FieldViolation, InvalidInput
from memmesh.ledger_event import Appended, NewEvent

PACK_HISTORY = 100


@dataclass(frozen=True)
class LearningPolicy:
    """Settings the use cases need (from AtomExtractorSettings)."""

    caps: LearningCaps
    k_threshold: int
    # Tenants whose policy permits private names in their company vocabulary pack.
    private_name_tenants: frozenset[str]
    # Keys pseudonyms (global contributors, package ids) so they cannot be reversed.
    pseudonym_secret: bytes


class LearningService:
    def __init__(
        self,
        store: LearningStore,
        envelope: Envelope,
        signer: PackageSigner,
        ledger: EventLedger,
        policy: LearningPolicy,
    ) -> None:
        self._store = store
        self._envelope = envelope
        self._signer = signer
        self._ledger = ledger
        self._policy = policy

    @property
    def k_threshold(self) -> int:
        return self._policy.k_threshold

    def signing_key(self) -> tuple[bytes, str]:
        """The public key devices pin, and its id."""
        return self._signer.public_key, self._signer.key_id

    def _contributor(self, tenant_id: str, user_id: str) -> str:
        return contributor_of(self._policy.pseudonym_secret, tenant_id, user_id)

    async def profile(self, tenant_id: str, user_id: str) -> LearningProfile:
        """The user's capsule, opened (empty when none or shredded)."""
        stored = await self._store.read_capsule(tenant_id, user_id)
        return self._open(tenant_id, user_id, stored)

    def _open(self, tenant_id: str, user_id: str, stored: SealedCapsule | None) -> LearningProfile:
        if stored is None or not stored.sealed:
            return LearningProfile()
        key = self._envelope.unwrap(tenant_id, user_id, stored.wrapped_key)
        return decode(self._envelope.open(key, tenant_id, user_id, stored.version, stored.sealed))

    async def observe_turn(
        self,
        tenant_id: str,
        user_id: str,
        text: str,
        correction: tuple[str, str] | None,
        session_id: str = "",
    ) -> LearningProfile:
        """Learn what a user turn teaches (kept under its conversation, so forgetting that
        conversation takes it); the capsule is resealed only when it changed."""
        learned = learn_from_turn(text, correction)
        if learned.empty:
            return await self.profile(tenant_id, user_id)
        profile = await self._change(
            tenant_id,
            user_id,
            lambda before: merge(before, learned, self._policy.caps, session_id),
        )
        if await self._store.opted_in(tenant_id, user_id):
            # The user's own vendors and terms never go global, even lower-cased.
            signals = generic_signals(learned.pairs, (*profile.vendors, *profile.terms))
            await self._store.contribute(self._contributor(tenant_id, user_id), signals)
        return profile

    async def forget(
        self, tenant_id: str, user_id: str, terms: Sequence[str], session_id: str = ""
    ) -> None:
        """Drop every learned entry holding a forgotten word and, for a forgotten
        conversation, what it taught, in one reseal."""
        if terms or session_id:
            await self._change(
                tenant_id,
                user_id,
                lambda before: without_session(without_terms(before, terms), session_id),
            )

    async def _change(
        self,
        tenant_id: str,
        user_id: str,
        change: Callable[[LearningProfile], LearningProfile],
    ) -> LearningProfile:
        """Open, change and reseal the capsule in one write (nothing written when unchanged;
        the first write gives the user a fresh data key)."""
        result: list[LearningProfile] = []

        def mutate(stored: SealedCapsule | None) -> SealedCapsule | None:
            before = self._open(tenant_id, user_id, stored)
            after = change(before)
            result.append(after)
            if after == before:
                return None
            if stored is None:
                key, wrapped = self._envelope.new_data_key(tenant_id, user_id)
            else:
                wrapped = stored.wrapped_key
                key = self._envelope.unwrap(tenant_id, user_id, wrapped)
            sealed = self._envelope.seal(key, tenant_id, user_id, after.version, encode(after))
            return SealedCapsule(wrapped, after.version, sealed)

        await self._store.update_capsule(tenant_id, user_id, mutate)
        return result[-1]

    async def hints(self, tenant_id: str, user_id: str, identity_verified: bool) -> Hints:
        """The capsule's and the company pack's hints, ordered and within the byte cap; none
        for an unverified voice (the capsule is voice-locked)."""
        if not identity_verified:
            return Hints()
        profile = await self.profile(tenant_id, user_id)
        versions = await self._store.pack_versions(tenant_id, 1)
        terms, pairs = packs.pack_hints(versions[0].entries) if versions else ([], [])
        return hints_of(profile, terms, pairs, self._policy.caps)

    async def forget_user(self, tenant_id: str, user_id: str) -> None:
        """Shred the user's data key and drop everything learned of them (idempotent)."""
        await self._store.shred(tenant_id, user_id, self._contributor(tenant_id, user_id))

    async def opted_in(self, tenant_id: str, user_id: str) -> bool:
        return await self._store.opted_in(tenant_id, user_id)

    async def set_consent(self, tenant_id: str, user_id: str, opted_in: bool, now_us: int) -> None:
        await self._store.set_consent(
            tenant_id, user_id, opted_in, self._contributor(tenant_id, user_id), now_us
        )

    async def release_signals(self, limit: int) -> list[Released]:
        """Signals with at least k distinct contributors; nothing below k ever leaves."""
        k = self._policy.k_threshold
        return releasable(await self._store.signal_counts(k), k)[:limit]

    async def put_pack(
        self,
        tenant_id: str,
        operator_id: str,
        entries: Sequence[packs.PackEntry],
        reason: str,
        now_us: int,
    ) -> tuple[int, str, bool]:
        """Store the pack as a new version (who, when, why kept with it): (version, hash,
        unchanged). InvalidInput naming the entry when it holds what a pack may not."""
        allowed = tenant_id in self._policy.private_name_tenants
        refusal = packs.refusal_of(entries, allowed)
        if refusal is not None:
            field = f"entries[{refusal.index}].{refusal.field}"
            raise InvalidInput([FieldViolation(field, refusal.reason)])
        body = packs.canonical(entries)
        sha256 = packs.sha256_of(body)
        version, unchanged = await self._store.put_pack(
            tenant_id, body, sha256, operator_id, reason, now_us
        )
        return version, sha256, unchanged

    async def pack_versions(self, tenant_id: str) -> list[packs.PackVersion]:
        return await self._store.pack_versions(tenant_id, PACK_HISTORY)

    async def build_package(
        self, tenant_id: str, user_id: str, identity_verified: bool
    ) -> SignedPackage:
        """The user's signed STT adaptation package; a new version only when its content
        changed, so building twice gives the same package."""
        if not identity_verified:
            raise InvalidInput(
                [FieldViolation("identity_verified", "the learning capsule is voice-locked")]
            )
        hints = await self.hints(tenant_id, user_id, identity_verified)
        package_id = package_id_of(self._contributor(tenant_id, user_id))
        version = await self._store.package_version(
            tenant_id, user_id, package_id, content_hash(hints)
        )
        return self._signer.sign(package_id, version, stt_artifact(package_id, version, hints))

    async def record_package_event(
        self,
        tenant_id: str,
        user_id: str,
        device_id: str,
        package_id: str,
        version: int,
        action: PackageAction,
        sha256: str,
        now_us: int,
    ) -> Appended:
        """One ledger event per (device, package, version, action): a repeat writes nothing."""
        event_type = (
            "LEARNING_PACKAGE_APPLIED"
            if action is PackageAction.APPLIED
            else "LEARNING_PACKAGE_ROLLED_BACK"
        )
        event = NewEvent(
            idempotency_key="pkg-" + digest(action.value, device_id, package_id, str(version))[:48],
            event_type=event_type,
            reason_code="DEVICE_" + action.value,
            attributes=(
                ("artifact_sha256", sha256),
                ("device_id", device_id),
                ("package_id", package_id),
                ("version", version),
            ),
            occur_time_us=now_us,
        )
        (appended,) = await self._ledger.append(tenant_id, user_id, [event])
        return appended
