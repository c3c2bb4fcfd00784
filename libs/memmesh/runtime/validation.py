"""Request validation driven by the (memmesh.common.v1.rules) field options."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from memmesh.common.v1 import field_rules_pb2
from memmesh.runtime.errors import FieldViolation, InvalidInput

# Strings the rules do not bound still get a ceiling, so no request carries megabytes of text.
DEFAULT_MAX_STRING = 65_536


@dataclass(frozen=True)
class CompiledRule:
    """The rules of one field, read once from the descriptor."""

    field: FieldDescriptor
    required: bool
    max_len: int
    pattern: re.Pattern[str] | None
    min_value: int | None
    max_value: int | None


def rules_of(field: FieldDescriptor) -> field_rules_pb2.FieldRules:
    """The FieldRules option of a field (empty when it has none)."""
    return field.GetOptions().Extensions[field_rules_pb2.rules]


@cache
def _compiled(descriptor: Descriptor) -> tuple[CompiledRule, ...]:
    compiled = []
    for field in descriptor.fields:
        options = field.GetOptions()
        has_rules = options.HasExtension(field_rules_pb2.rules)
        rules = rules_of(field)
        compiled.append(
            CompiledRule(
                field=field,
                required=has_rules and rules.required,
                max_len=rules.max_len if has_rules else 0,
                pattern=re.compile(rules.pattern) if has_rules and rules.pattern else None,
                min_value=rules.min if has_rules and rules.HasField("min") else None,
                max_value=rules.max if has_rules and rules.HasField("max") else None,
            )
        )
    return tuple(compiled)


def _is_repeated(field: FieldDescriptor) -> bool:
    return field.is_repeated


def _check_scalar(rule: CompiledRule, path: str, value: object) -> list[FieldViolation]:
    field = rule.field
    if field.type == FieldDescriptor.TYPE_STRING:
        text = str(value)
        limit = rule.max_len or DEFAULT_MAX_STRING
        if len(text) > limit:
            return [FieldViolation(path, f"must be at most {limit} characters")]
        if text and rule.pattern is not None and not rule.pattern.fullmatch(text):
            return [FieldViolation(path, f"must match {rule.pattern.pattern}")]
    elif field.type == FieldDescriptor.TYPE_BYTES:
        if rule.max_len and len(value) > rule.max_len:  # type: ignore[arg-type]
            return [FieldViolation(path, f"must be at most {rule.max_len} bytes")]
    elif field.type == FieldDescriptor.TYPE_ENUM:
        if value not in field.enum_type.values_by_number:
            return [FieldViolation(path, "is not a known enum value")]
    elif field.cpp_type in (FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64):
        number = int(value)  # type: ignore[call-overload]
        if rule.min_value is not None and number < rule.min_value:
            return [FieldViolation(path, f"must be at least {rule.min_value}")]
        if rule.max_value is not None and number > rule.max_value:
            return [FieldViolation(path, f"must be at most {rule.max_value}")]
    return []


def _is_unset(field: FieldDescriptor, message: Message) -> bool:
    if _is_repeated(field):
        return len(getattr(message, field.name)) == 0
    if field.message_type is not None:
        return not message.HasField(field.name)
    value = getattr(message, field.name)
    return value in ("", b"", 0, False)


def _missing(field: FieldDescriptor, path: str) -> list[FieldViolation]:
    # A missing required message is reported by the required fields inside it
    # (scope -> scope.tenant_id, scope.user_id), so clients see the leaf to fill in.
    if field.message_type is not None and not field.is_repeated:
        empty = message_factory.GetMessageClass(field.message_type)()
        inner = [v for v in violations(empty, f"{path}.") if v.description == "is required"]
        if inner:
            return inner
    return [FieldViolation(path, "is required")]


def violations(message: Message, prefix: str = "") -> list[FieldViolation]:
    """Every rule the message breaks, with dotted field paths."""
    found: list[FieldViolation] = []
    for rule in _compiled(message.DESCRIPTOR):
        field = rule.field
        path = f"{prefix}{field.name}"
        if _is_unset(field, message):
            if rule.required:
                found.extend(_missing(field, path))
            continue
        if _is_repeated(field):
            items = getattr(message, field.name)
            if rule.max_len and len(items) > rule.max_len:
                found.append(FieldViolation(path, f"must have at most {rule.max_len} items"))
                continue
            for index, item in enumerate(items):
                item_path = f"{path}[{index}]"
                if field.message_type is not None:
                    if not field.message_type.GetOptions().map_entry:
                        found.extend(violations(item, f"{item_path}."))
                else:
                    found.extend(_check_scalar(rule, item_path, item))
        elif field.message_type is not None:
            found.extend(violations(getattr(message, field.name), f"{path}."))
        else:
            if rule.required and field.type == FieldDescriptor.TYPE_ENUM and getattr(message, field.name) == 0:
                found.append(FieldViolation(path, "must not be UNSPECIFIED"))
                continue
            found.extend(_check_scalar(rule, path, getattr(message, field.name)))
    return found


def validate(message: Message) -> None:
    """Raise InvalidInput naming every bad field of the message."""
    found = violations(message)
    if found:
        raise InvalidInput(found)
