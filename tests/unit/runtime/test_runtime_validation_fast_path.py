"""The fast validation path agrees with the full walk on every request type: a message
passes exactly when violations() finds nothing, for valid messages and for one broken
rule at a time (too long, wrong pattern, out of range, unknown enum, missing, too many)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from memmesh.runtime.settings import ENGINE_NAMES
from memmesh.runtime.validation import DEFAULT_MAX_STRING, passes, rules_of, violations


def request_types() -> list[Descriptor]:
    found = []
    for engine in ENGINE_NAMES:
        module = importlib.import_module(f"memmesh.{engine}.v1.{engine}_service_pb2")
        for service in module.DESCRIPTOR.services_by_name.values():
            found.extend(method.input_type for method in service.methods)
    return found


def _example(field: FieldDescriptor) -> object:
    rules = rules_of(field)
    if field.type == FieldDescriptor.TYPE_ENUM:
        if rules.example:
            return field.enum_type.values_by_name[rules.example].number
        return next(v.number for v in field.enum_type.values if v.number != 0)
    if field.type == FieldDescriptor.TYPE_STRING:
        return rules.example or "example"
    if field.type == FieldDescriptor.TYPE_BYTES:
        return b"example"
    if field.type == FieldDescriptor.TYPE_BOOL:
        return True
    if field.cpp_type in (FieldDescriptor.CPPTYPE_FLOAT, FieldDescriptor.CPPTYPE_DOUBLE):
        return 1.5
    return (
        int(rules.example) if rules.example else max(rules.min if rules.HasField("min") else 1, 1)
    )


def fill(message: Message, everything: bool, depth: int = 0) -> Message:
    """Required fields (or every field) filled with valid values; one member per oneof."""
    for field in message.DESCRIPTOR.fields:
        if field.containing_oneof is not None and message.WhichOneof(field.containing_oneof.name):
            continue
        if not (everything or rules_of(field).required) or depth > 3:
            continue
        if field.message_type is not None:
            if field.message_type.GetOptions().map_entry:
                continue
            target = (
                getattr(message, field.name).add()
                if field.is_repeated
                else getattr(message, field.name)
            )
            fill(target, everything, depth + 1)
            target.SetInParent()
        elif field.is_repeated:
            getattr(message, field.name).append(_example(field))
        else:
            setattr(message, field.name, _example(field))
    return message


def _broken_values(field: FieldDescriptor) -> Iterator[object]:
    rules = rules_of(field)
    if field.type == FieldDescriptor.TYPE_STRING:
        yield "x" * ((rules.max_len or DEFAULT_MAX_STRING) + 1)
        # NUL is refused everywhere, a newline in identifiers only.
        yield "a\x00b"
        yield "a\nb"
        if rules.pattern:
            yield "has space!"
    elif field.type == FieldDescriptor.TYPE_BYTES and rules.max_len:
        yield b"x" * (rules.max_len + 1)
    elif field.type == FieldDescriptor.TYPE_ENUM and not field.enum_type.is_closed:
        yield 999
    elif field.cpp_type in (FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64):
        if rules.HasField("min"):
            yield rules.min - 1
        if rules.HasField("max"):
            yield rules.max + 1


def _put(message: Message, field: FieldDescriptor, value: object) -> None:
    """Set (or, for a repeated field, append) one value, alone in its oneof."""
    if field.containing_oneof is not None:
        message.ClearField(field.containing_oneof.name)
    if field.is_repeated:
        getattr(message, field.name).append(value)
    else:
        setattr(message, field.name, value)


def _broken_list_items(cls: type[Message], field: FieldDescriptor) -> Iterator[tuple[str, Message]]:
    """Lists of two items where the second breaks one rule of its own (a list of flat items
    is checked a column at a time, so a bad value after a good one must still be found)."""

    def two_items() -> tuple[Message, Message]:
        message = fill(cls(), everything=True)
        return message, fill(getattr(message, field.name).add(), everything=True)

    yield f"{field.name} two items", two_items()[0]
    for inner in field.message_type.fields:
        if inner.message_type is not None:
            continue
        if rules_of(inner).required:
            message, second = two_items()
            second.ClearField(inner.name)
            yield f"{field.name}[1].{inner.name} missing", message
        for value in _broken_values(inner):
            message, second = two_items()
            _put(second, inner, value)
            yield f"{field.name}[1].{inner.name}={str(value)[:12]}", message


def variants(descriptor: Descriptor) -> Iterator[tuple[str, Message]]:
    cls = message_factory.GetMessageClass(descriptor)
    yield "required only", fill(cls(), everything=False)
    yield "every field", fill(cls(), everything=True)
    yield "empty", cls()
    for field in descriptor.fields:
        base = fill(cls(), everything=True)
        if rules_of(field).required:
            missing = fill(cls(), everything=True)
            missing.ClearField(field.name)
            yield f"{field.name} missing", missing
        if field.message_type is not None:
            if not field.is_repeated and not field.message_type.GetOptions().map_entry:
                for inner in field.message_type.fields:
                    for value in (
                        _broken_values(inner)
                        if not inner.is_repeated and inner.message_type is None
                        else ()
                    ):
                        broken = fill(cls(), everything=True)
                        target = getattr(broken, field.name)
                        if inner.containing_oneof is not None:
                            target.ClearField(inner.containing_oneof.name)
                        setattr(target, inner.name, value)
                        yield f"{field.name}.{inner.name}={str(value)[:12]}", broken
            if field.is_repeated and not field.message_type.GetOptions().map_entry:
                yield from _broken_list_items(cls, field)
            if (
                field.is_repeated
                and rules_of(field).max_len
                and not field.message_type.GetOptions().map_entry
            ):
                crowded = fill(cls(), everything=True)
                for _ in range(rules_of(field).max_len):
                    fill(getattr(crowded, field.name).add(), everything=False)
                yield f"{field.name} crowded", crowded
            continue
        for value in _broken_values(field):
            broken = fill(cls(), everything=True)
            _put(broken, field, value)
            yield f"{field.name}={str(value)[:12]}", broken
        if field.is_repeated and rules_of(field).max_len:
            getattr(base, field.name).extend([_example(field)] * rules_of(field).max_len)
            yield f"{field.name} crowded", base
        if not field.is_repeated and field.has_presence:
            zero = fill(cls(), everything=True)
            setattr(zero, field.name, type(getattr(zero, field.name))())
            yield f"{field.name} set to zero", zero


@pytest.mark.parametrize("descriptor", request_types(), ids=lambda d: d.full_name)
def test_fast_path_passes_exactly_the_messages_without_violations(descriptor: Descriptor) -> None:
    for label, message in variants(descriptor):
        assert passes(message) == (not violations(message)), (
            label,
            [v.field for v in violations(message)],
        )
