"""The only module that knows both the peers' protobuf types and the gateway's domain types,
and the forms one engine's message takes on its way to another."""

from __future__ import annotations

from collections.abc import Iterable

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.common.v1 import memory_pb2
from memmesh.extraction.profile import AppliedChange
from memmesh.gateway.v1 import gateway_service_pb2 as pb


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
