"""The only place that knows both the learning domain types and their proto messages."""

from __future__ import annotations

from collections.abc import Iterable

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.device.learning_packages import SignedPackage
from memmesh.engines.atom_extractor.learning.global_signals import Released
from memmesh.engines.atom_extractor.learning.profile import Hints, LearningProfile
from memmesh.engines.atom_extractor.learning.vocabulary_pack import (
    EntryKind,
    PackEntry,
    PackVersion,
)
from memmesh.runtime.timeconv import timestamp_of


def hints_message(hints: Hints) -> pb.LearningHints:
    return pb.LearningHints(
        vocabulary=list(hints.vocabulary),
        pairs=[pb.Correction(heard=heard, meant=meant) for heard, meant in hints.pairs],
    )


def profile_message(profile: LearningProfile, opted_in: bool) -> pb.GetLearningProfileResponse:
    return pb.GetLearningProfileResponse(
        served=True,
        pairs=[
            pb.LearnedPair(said=p.said, meant=p.meant, kind=p.kind.value) for p in profile.pairs
        ],
        vendors=list(profile.vendors),
        terms=list(profile.terms),
        version=profile.version,
        global_signals_opt_in=opted_in,
    )


def entries_of(entries: Iterable[pb.VocabularyEntry]) -> list[PackEntry]:
    return [
        PackEntry(
            " ".join(e.term.split()),
            EntryKind(pb.VocabularyKind.Name(e.kind).removeprefix("VOCABULARY_KIND_")),
            " ".join(e.sounds_like.split()),
        )
        for e in entries
    ]


def _entry_message(entry: PackEntry) -> pb.VocabularyEntry:
    return pb.VocabularyEntry(
        term=entry.term,
        kind=pb.VocabularyKind.Value(f"VOCABULARY_KIND_{entry.kind.value}"),
        sounds_like=entry.sounds_like,
    )


def pack_version_message(version: PackVersion) -> pb.VocabularyPackVersion:
    return pb.VocabularyPackVersion(
        version=version.version,
        entries=[_entry_message(e) for e in version.entries],
        added_by=version.added_by,
        reason=version.reason,
        add_time=timestamp_of(version.add_time_us),
        sha256=version.sha256,
    )


def signal_message(released: Released) -> pb.GlobalSignal:
    signal = released.signal
    return pb.GlobalSignal(
        kind=signal.kind,
        heard=signal.heard,
        meant=signal.meant,
        contributors=released.contributors,
    )


def package_message(package: SignedPackage) -> pb.LearningPackage:
    return pb.LearningPackage(
        package_id=package.package_id,
        version=package.version,
        artifact=package.artifact,
        sha256=package.sha256,
        signature=package.signature,
        key_id=package.key_id,
    )


def package_of(message: pb.LearningPackage) -> SignedPackage:
    return SignedPackage(
        message.package_id,
        message.version,
        message.artifact,
        message.sha256,
        message.signature,
        message.key_id,
    )
