"""The only module that knows both the peers' protobuf types and the gateway's domain types,
and the forms one engine's message takes on its way to another."""

from __future__ import annotations

from collections.abc import Iterable

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.engines.gateway.domain.profile import AppliedChange
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as ranker_pb
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb


def applied_changes(processed: extractor_pb.ProcessResponse) -> list[AppliedChange]:
    """The extraction's applied atom changes in the profile rule's terms."""
    return [
        AppliedChange(
            kind=extractor_pb.ChangeKind.Name(change.kind).removeprefix("CHANGE_KIND_"),
            status=memory_pb2.AtomStatus.Name(change.atom.status).removeprefix("ATOM_STATUS_"),
            exposure=memory_pb2.Exposure.Name(change.atom.exposure).removeprefix("EXPOSURE_"),
            key=change.atom.key,
            text=change.atom.text,
            critical_tokens=tuple(change.atom.critical_tokens),
            confidence_bp=change.atom.confidence_bp,
        )
        for change in processed.changes
    ]


def turn_document(turn: memory_pb2.Turn, exposure: memory_pb2.Exposure.ValueType) -> ranker_pb.Document:
    """The index document of an archived turn with its archived exposure (the form a Reindex builds)."""
    archived = memory_pb2.Turn()
    archived.CopyFrom(turn)
    archived.exposure = exposure
    return ranker_pb.Document(
        doc_id=turn.turn_id, kind=ranker_pb.DOCUMENT_KIND_TURN, text=turn.text, turn=archived, time=turn.time
    )


def digest_document(digest: thread_pb.Digest) -> ranker_pb.Document:
    """The index document of a session or episode digest (the form a Reindex builds)."""
    lines = [line for line in (digest.title, digest.summary, *digest.key_entities) if line]
    document = ranker_pb.Document(
        doc_id=digest.episode_id or digest.thread_id, kind=ranker_pb.DOCUMENT_KIND_DIGEST, text="\n".join(lines),
        evidence_turn_ids=digest.evidence_turn_ids, thread_id=digest.thread_id if digest.episode_id else "",
    )  # fmt: skip
    if digest.HasField("update_time"):
        document.time.CopyFrom(digest.update_time)
    return document


def digests_upsert(scope: scope_pb2.UserScope, digests: Iterable[thread_pb.Digest]) -> ranker_pb.UpsertRequest:
    """The index upsert of a closed session's digests."""
    return ranker_pb.UpsertRequest(scope=scope, documents=[digest_document(d) for d in digests])


def command_name(command: extractor_pb.Command.ValueType) -> str:
    """A command's name without its prefix; empty for none."""
    return "" if command == 0 else extractor_pb.Command.Name(command).removeprefix("COMMAND_")


def extractor_command(command: pb.UserCommand.ValueType) -> extractor_pb.Command.ValueType:
    """The AtomExtractor command of a gateway command (same names)."""
    name = pb.UserCommand.Name(command).removeprefix("USER_COMMAND_")
    return extractor_pb.Command.Value(f"COMMAND_{name}")


def atom_counts(atoms: Iterable[memory_pb2.Atom]) -> list[str]:
    """Atoms by status, "ACTIVE=3", sorted by status."""
    counts: dict[str, int] = {}
    for atom in atoms:
        status = memory_pb2.AtomStatus.Name(atom.status).removeprefix("ATOM_STATUS_")
        counts[status] = counts.get(status, 0) + 1
    return [f"{status}={count}" for status, count in sorted(counts.items())]
