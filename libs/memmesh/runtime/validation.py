"""Request validation driven by the (memmesh.common.v1.rules) field options."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

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
        if field.enum_type is None or value not in field.enum_type.values_by_number:
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
            if (
                rule.required
                and field.type == FieldDescriptor.TYPE_ENUM
                and getattr(message, field.name) == 0
            ):
                found.append(FieldViolation(path, "must not be UNSPECIFIED"))
                continue
            found.extend(_check_scalar(rule, path, getattr(message, field.name)))
    return found


# The fast path below answers only "does the message break any rule?", reading just the
# fields that are set (ListFields, in C) with checks compiled once per message type; the
# full walk above runs only for a message that fails, to name every violation in order.
# Both apply the same rules: a message passes one exactly when it passes the other.
FieldCheck = Callable[[Any], bool]
MessageCheck = Callable[[Message], bool]
_UNSET_SCALARS = ("", b"", 0, False)


def _scalar_check(rule: CompiledRule) -> FieldCheck | None:
    """A check of one scalar value, or None when no value can break the rule."""
    field = rule.field
    if field.type == FieldDescriptor.TYPE_STRING:
        limit, pattern = rule.max_len or DEFAULT_MAX_STRING, rule.pattern
        if pattern is None:
            return lambda text: len(text) <= limit
        return lambda text: len(text) <= limit and (not text or pattern.fullmatch(text) is not None)
    if field.type == FieldDescriptor.TYPE_BYTES:
        byte_limit = rule.max_len
        return (lambda data: len(data) <= byte_limit) if byte_limit else None
    if field.type == FieldDescriptor.TYPE_ENUM:
        known = frozenset(field.enum_type.values_by_number if field.enum_type is not None else ())
        return lambda number: number in known
    if field.cpp_type in (FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64):
        low, high = rule.min_value, rule.max_value
        if low is None and high is None:
            return None
        return lambda number: (low is None or number >= low) and (high is None or number <= high)
    return None


def _message_check(descriptor: Descriptor) -> MessageCheck:
    # Looked up when called, so message types that contain themselves compile lazily.
    return lambda message: _check_of(descriptor)(message)


def _all(check: FieldCheck) -> FieldCheck:
    return lambda items: all(map(check, items))


def _field_check(rule: CompiledRule) -> FieldCheck | None:
    field = rule.field
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        item_check: FieldCheck | None = None  # map entries carry no rules
    elif field.message_type is not None:
        item_check = _message_check(field.message_type)
    else:
        item_check = _scalar_check(rule)
    if not _is_repeated(field):
        return item_check
    limit = rule.max_len
    if item_check is None:
        return (lambda items: len(items) <= limit) if limit else None
    every = _all(item_check)
    return (lambda items: len(items) <= limit and every(items)) if limit else every


@cache
def _check_of(descriptor: Descriptor) -> MessageCheck:
    """True when the message breaks no rule (equivalent to `not violations(message)`)."""
    plans: dict[int, tuple[bool, bool, FieldCheck | None]] = {}
    required_count = 0
    for rule in _compiled(descriptor):
        field = rule.field
        scalar = not _is_repeated(field) and field.message_type is None
        plans[field.number] = (rule.required, scalar, _field_check(rule))
        required_count += rule.required

    def check(message: Message) -> bool:
        required_seen = 0
        for field, value in message.ListFields():
            required, scalar, field_check = plans[field.number]
            if scalar and value in _UNSET_SCALARS:
                continue  # a scalar set to its zero value counts as unset, as in violations()
            required_seen += required
            if field_check is not None and not field_check(value):
                return False
        return required_seen == required_count

    return check


def passes(message: Message) -> bool:
    """True when the message breaks no rule; cheaper than violations() for valid messages."""
    return _check_of(message.DESCRIPTOR)(message)


def validate(message: Message) -> None:
    """Raise InvalidInput naming every bad field of the message."""
    if passes(message):
        return
    found = violations(message)
    if found:
        raise InvalidInput(found)
