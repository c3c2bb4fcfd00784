"""Requests built from the proto descriptors and their field rules, for generated tests."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message

from memmesh.runtime.settings import ENGINE_NAMES
from memmesh.runtime.validation import rules_of

FIXED_SECONDS = 1_767_225_600  # 2026-01-01T00:00:00Z: requests carry `now`, never the wall clock


@dataclass(frozen=True)
class Rpc:
    """One RPC of one engine's service, found in the descriptors."""

    engine: str
    service: str
    method: MethodDescriptor

    @property
    def path(self) -> str:
        return f"/{self.service}/{self.method.name}"

    @property
    def id(self) -> str:
        return f"{self.engine}.{self.method.name}"


def service_rpcs(engines: list[str]) -> list[Rpc]:
    """Every RPC of every given engine's service, in file order."""
    rpcs = []
    for engine in engines:
        module = importlib.import_module(f"memmesh.{engine}.v1.{engine}_service_pb2")
        for service in module.DESCRIPTOR.services_by_name.values():
            rpcs.extend(Rpc(engine, service.full_name, method) for method in service.methods)
    return rpcs


def all_engine_names() -> tuple[str, ...]:
    return ENGINE_NAMES


def message_class(descriptor: Descriptor) -> type[Message]:
    return message_factory.GetMessageClass(descriptor)


def _scalar_example(field: FieldDescriptor) -> object:
    rules = rules_of(field)
    if field.type == FieldDescriptor.TYPE_ENUM:
        if rules.example:
            return field.enum_type.values_by_name[rules.example].number
        return next(v.number for v in field.enum_type.values if v.number != 0)
    if field.type == FieldDescriptor.TYPE_STRING:
        return rules.example or "example"
    if field.type == FieldDescriptor.TYPE_BYTES:
        return (rules.example or "example").encode()
    if field.type == FieldDescriptor.TYPE_BOOL:
        return True
    if rules.example:
        return int(rules.example)
    return max(rules.min if rules.HasField("min") else 1, 1)


def _fill(message: Message, field: FieldDescriptor) -> None:
    if field.message_type is not None:
        if field.message_type.full_name == "google.protobuf.Timestamp":
            target = (
                getattr(message, field.name).add()
                if field.is_repeated
                else getattr(message, field.name)
            )
            target.seconds = FIXED_SECONDS
            return
        target = (
            getattr(message, field.name).add()
            if field.is_repeated
            else getattr(message, field.name)
        )
        fill_example(target)
        target.SetInParent()
    elif field.is_repeated:
        getattr(message, field.name).append(_scalar_example(field))
    else:
        setattr(message, field.name, _scalar_example(field))


def fill_example(message: Message) -> Message:
    """Fill every required field from its rules' example; a oneof nobody set gets its
    first member with an example (else its first member)."""
    for field in message.DESCRIPTOR.fields:
        if rules_of(field).required:
            _fill(message, field)
    for oneof in message.DESCRIPTOR.oneofs:
        if oneof.name.startswith("_") or message.WhichOneof(oneof.name) is not None:
            continue
        members = list(oneof.fields)
        chosen = next((f for f in members if rules_of(f).example), members[0])
        _fill(message, chosen)
    return message


def valid_request(rpc: Rpc) -> Message:
    """A request every rule accepts."""
    return fill_example(message_class(rpc.method.input_type)())
