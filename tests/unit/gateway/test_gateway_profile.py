"""Which stated facts fill empty Current State profile fields."""

from __future__ import annotations

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as pb
from memmesh.common.v1 import memory_pb2
from memmesh.engines.gateway.mapping import applied_changes
from memmesh.extraction.profile import stated_profile


def change(key: str, text: str, tokens: list[str], **overrides: object) -> pb.AtomChange:
    fields: dict[str, object] = {
        "key": key,
        "text": text,
        "critical_tokens": tokens,
        "confidence_bp": 9000,
        "status": memory_pb2.ATOM_STATUS_ACTIVE,
        "exposure": memory_pb2.EXPOSURE_SAFE_TO_SPEAK,
    }
    fields.update(overrides)
    return pb.AtomChange(kind=pb.CHANGE_KIND_CREATED, atom=memory_pb2.Atom(**fields))  # type: ignore[arg-type]


def test_a_stated_name_and_language_become_profile_fields() -> None:
    processed = pb.ProcessResponse(
        changes=[
            change("identity.name", "User's name is Ana.", ["Ana"]),
            change("identity.language.native", "User's native language is Spanish.", []),
        ]
    )
    assert stated_profile(applied_changes(processed)) == {
        "display_name": "Ana",
        "primary_language": "es",
    }


def test_uncertain_conflicting_or_unsafe_facts_are_not_adopted() -> None:
    processed = pb.ProcessResponse(
        changes=[
            change("identity.name", "User's name is Ana.", ["Ana"], confidence_bp=7000),
            change(
                "identity.name",
                "User's name is Bo.",
                ["Bo"],
                status=memory_pb2.ATOM_STATUS_CONFLICT,
            ),
            change(
                "identity.name",
                "User's name is Cy.",
                ["Cy"],
                exposure=memory_pb2.EXPOSURE_INTERNAL_ONLY,
            ),
            change("constraint.language.response", "User wants answers in Spanish or French.", []),
        ]
    )
    assert stated_profile(applied_changes(processed)) == {}


def test_a_forget_is_not_an_adoption() -> None:
    forgotten = change("identity.name", "", ["Ana"])
    forgotten.kind = pb.CHANGE_KIND_FORGOTTEN
    assert stated_profile(applied_changes(pb.ProcessResponse(changes=[forgotten]))) == {}
