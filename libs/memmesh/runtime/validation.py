"""Request validation driven by the (memmesh.common.v1.rules) field options."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from itertools import chain
from operator import attrgetter
from typing import Any

from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from memmesh.common.v1 import field_rules_pb2
from memmesh.runtime.errors import FieldViolation, InvalidInput

# Strings the rules do not bound still get a ceiling, so no request carries megabytes of text.
DEFAULT_MAX_STRING = 65_536

# google.protobuf.Timestamp's own range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
TIMESTAMP = "google.protobuf.Timestamp"
MIN_TIMESTAMP_SECONDS = -62_135_596_800
MAX_TIMESTAMP_SECONDS = 253_402_300_799
MAX_NANOS = 999_999_999

# Identifiers (ids, keys, tokens, codes, targets) hold no control characters at all: no NUL,
# no newline that could forge a log line, no C1 control, no Unicode line separator.
# Free text (a turn, a query, a summary) may hold tabs and newlines, but never NUL, which
# PostgreSQL text cannot store.
_ID_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_TEXT_FORBIDDEN = re.compile("\x00")
_ID_SUFFIXES = ("_id", "_ids", "_key", "_token", "_code", "_type", "_kind")
_ID_NAMES = frozenset({"key", "target", "name", "topics"})


def is_identifier(field: FieldDescriptor) -> bool:
    """True for a string field that names something (an id, key, token, code or target)
    rather than carrying free text."""
    return field.name in _ID_NAMES or field.name.endswith(_ID_SUFFIXES)


def _forbidden_of(field: FieldDescriptor) -> re.Pattern[str]:
    return _ID_FORBIDDEN if is_identifier(field) else _TEXT_FORBIDDEN


def _char_violation(field: FieldDescriptor, path: str, text: str) -> list[FieldViolation]:
    if not _forbidden_of(field).search(text):
        return []
    if is_identifier(field):
        return [FieldViolation(path, "must not contain NUL or control characters")]
    return [FieldViolation(path, "must not contain NUL characters")]


def timestamp_violations(timestamp: Message, prefix: str) -> list[FieldViolation]:
    """Seconds and nanos outside google.protobuf.Timestamp's range."""
    found = []
    seconds, nanos = timestamp.seconds, timestamp.nanos  # type: ignore[attr-defined]
    if not MIN_TIMESTAMP_SECONDS <= seconds <= MAX_TIMESTAMP_SECONDS:
        found.append(
            FieldViolation(
                f"{prefix}seconds", "must be within 0001-01-01T00:00:00Z..9999-12-31T23:59:59Z"
            )
        )
    if not 0 <= nanos <= MAX_NANOS:
        found.append(FieldViolation(f"{prefix}nanos", f"must be within 0..{MAX_NANOS}"))
    return found


def _timestamp_passes(timestamp: Any) -> bool:
    seconds: int = timestamp.seconds
    nanos: int = timestamp.nanos
    return MIN_TIMESTAMP_SECONDS <= seconds <= MAX_TIMESTAMP_SECONDS and 0 <= nanos <= MAX_NANOS


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
        if bad := _char_violation(field, path, text):
            return bad
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
    if message.DESCRIPTOR.full_name == TIMESTAMP:
        return timestamp_violations(message, prefix)
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
        forbidden = _forbidden_of(field).search
        if pattern is None:
            return lambda text: len(text) <= limit and not forbidden(text)
        return lambda text: (
            len(text) <= limit
            and not forbidden(text)
            and (not text or pattern.fullmatch(text) is not None)
        )
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


def _is_flat(descriptor: Descriptor) -> bool:
    """A message type with scalar fields only (strings, numbers, enums, repeated scalars)."""
    return all(field.message_type is None for field in descriptor.fields)


def _strings_check(rule: CompiledRule, required: bool) -> FieldCheck:
    """A string field's rules over a list of its values. Joined by a space, which no rule
    forbids, the values are searched for forbidden characters at once."""
    limit, pattern = rule.max_len or DEFAULT_MAX_STRING, rule.pattern
    forbidden = _forbidden_of(rule.field).search
    return lambda texts: (
        (not required or all(texts))
        and max(map(len, texts), default=0) <= limit
        and not forbidden(" ".join(texts))
        and (pattern is None or all(pattern.fullmatch(text) for text in texts if text))
    )


def _column_check(rule: CompiledRule) -> FieldCheck | None:
    """One field's rules over that field's values in every message of a list (a column):
    true when each value passes as the one-message check would read it. A singular scalar
    set to its zero value is unset there, so it is only checked for being required."""
    field = rule.field
    is_string = field.type == FieldDescriptor.TYPE_STRING
    if _is_repeated(field):
        limit = rule.max_len
        if is_string:
            # Each element is bounded by max_len too, as _scalar_check bounds it.
            elements = _strings_check(rule, required=False)
        else:
            element = _scalar_check(rule)
            elements = _all(element) if element is not None else (lambda _: True)
        return lambda lists: (
            (not rule.required or all(map(len, lists)))
            and (not limit or max(map(len, lists), default=0) <= limit)
            and elements(list(chain.from_iterable(lists)))
        )
    if is_string:
        return _strings_check(rule, rule.required)
    value_check = _scalar_check(rule)
    if value_check is None and not rule.required:
        return None
    return lambda values: (
        (not rule.required or all(values))
        and (value_check is None or all(value_check(value) for value in values if value))
    )


def _list_check(descriptor: Descriptor) -> FieldCheck:
    """A check of a repeated message field. Items of a flat type are read a column at a time
    (one C-level pass per field instead of a Python loop per item): a list of tens of
    guard items is checked several times faster. Other types are checked item by item."""
    if not _is_flat(descriptor) or descriptor.full_name == TIMESTAMP:
        return _all(_message_check(descriptor))
    columns = [
        (rule.field.name, check)
        for rule in _compiled(descriptor)
        if (check := _column_check(rule)) is not None
    ]
    if not columns:
        return lambda items: True
    checks = [check for _, check in columns]
    # One C-level read of every checked field per item, then the rows turned into columns.
    read = attrgetter(*(name for name, _ in columns))
    if len(columns) == 1:
        return lambda items: checks[0](list(map(read, items)))
    return lambda items: (
        not items
        or all(
            check(column)
            for check, column in zip(checks, zip(*map(read, items), strict=True), strict=True)
        )
    )


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
    every = _list_check(field.message_type) if field.message_type is not None else _all(item_check)
    return (lambda items: len(items) <= limit and every(items)) if limit else every


@cache
def _check_of(descriptor: Descriptor) -> MessageCheck:
    """True when the message breaks no rule (equivalent to `not violations(message)`)."""
    if descriptor.full_name == TIMESTAMP:
        return _timestamp_passes
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


# The caller's clock: `now` and the time of a turn being recorded must lie near the server's
# clock. A client that puts microseconds into `seconds`, or a turn dated 9999, is refused here
# rather than freezing session detection or queuing an effect that can never apply. Only what
# a caller states about the present is checked: the request's own `now` (or
# `interaction_time`) and the time of the turn it records (`turn.time`); copies of archived
# turns and atoms inside a request keep the times they were recorded with.
CLOCK_FIELD_NAMES = frozenset({"now", "interaction_time"})
CLOCK_FIELDS_OF = {"memmesh.common.v1.Turn": frozenset({"time"})}


class ClockWindow(BaseSettings):
    """How far before and after the server's clock a caller's time may lie, seconds
    (MEMMESH_CLOCK_SKEW_PAST_S, MEMMESH_CLOCK_SKEW_FUTURE_S)."""

    model_config = SettingsConfigDict(env_prefix="MEMMESH_CLOCK_SKEW_", extra="ignore", frozen=True)

    # Ten years back: conversations imported from a file keep their own dates.
    past_s: int = Field(default=10 * 365 * 86_400, ge=0)
    # A day ahead: clocks drift and time zones get mixed up, no more.
    future_s: int = Field(default=86_400, ge=0)


def _is_timestamp(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.full_name == TIMESTAMP


@cache
def _clock_plan(descriptor: Descriptor) -> tuple[tuple[str, ...], ...]:
    """Paths (field names) of the caller clock times a request type carries."""
    plan: list[tuple[str, ...]] = []
    for field in descriptor.fields:
        if field.is_repeated or field.message_type is None:
            continue
        if _is_timestamp(field) and field.name in CLOCK_FIELD_NAMES:
            plan.append((field.name,))
        for inner in CLOCK_FIELDS_OF.get(field.message_type.full_name, ()):
            plan.append((field.name, inner))
    return tuple(plan)


def _set_timestamp(message: Message, path: tuple[str, ...]) -> Any:
    for name in path:
        if not message.HasField(name):
            return None
        message = getattr(message, name)
    return message


def clock_violations(
    message: Message, window: ClockWindow, server_now_s: float
) -> list[FieldViolation]:
    """Caller times (`now`, the recorded turn's time) outside the window around the server's
    clock. Times outside Timestamp's own range are left to validate()."""
    found: list[FieldViolation] = []
    for path in _clock_plan(message.DESCRIPTOR):
        timestamp = _set_timestamp(message, path)
        if timestamp is None or not _timestamp_passes(timestamp):
            continue
        seconds, name = timestamp.seconds, ".".join(path)
        if seconds < server_now_s - window.past_s:
            found.append(
                FieldViolation(name, f"must be at most {window.past_s} s before the server's clock")
            )
        elif seconds > server_now_s + window.future_s:
            found.append(
                FieldViolation(
                    name, f"must be at most {window.future_s} s after the server's clock"
                )
            )
    return found


def validate_clock(message: Message, window: ClockWindow, server_now_s: float) -> None:
    """Raise InvalidInput naming every caller time outside the window."""
    if not _clock_plan(message.DESCRIPTOR):
        return
    found = clock_violations(message, window, server_now_s)
    if found:
        raise InvalidInput(found)


# Requests that do not decode: the wire bytes are walked to name the field at fault (a
# string that is not UTF-8, a truncated or corrupt nested message).
_WIRE_VARINT, _WIRE_I64, _WIRE_LEN, _WIRE_I32 = 0, 1, 2, 5


class _Corrupt(Exception):
    pass


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(data) or shift > 63:
            raise _Corrupt
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _wire_fault(descriptor: Descriptor | None, data: bytes, prefix: str) -> FieldViolation | None:
    counts: dict[int, int] = {}
    pos = 0
    while pos < len(data):
        try:
            key, pos = _varint(data, pos)
        except _Corrupt:
            return FieldViolation(prefix.rstrip(".") or "request", "is not a valid message")
        number, wire = key >> 3, key & 7
        field = descriptor.fields_by_number.get(number) if descriptor is not None else None
        path = prefix + (field.name if field is not None else f"#{number}")
        if field is not None and field.is_repeated:
            index = counts.get(number, 0)
            counts[number] = index + 1
            path = f"{path}[{index}]"
        try:
            if wire == _WIRE_VARINT:
                _, pos = _varint(data, pos)
            elif wire == _WIRE_I64:
                pos += 8
            elif wire == _WIRE_I32:
                pos += 4
            elif wire == _WIRE_LEN:
                length, pos = _varint(data, pos)
                chunk, pos = data[pos : pos + length], pos + length
                if pos > len(data):
                    raise _Corrupt
                fault = _chunk_fault(field, chunk, path)
                if fault is not None:
                    return fault
            else:
                raise _Corrupt
        except _Corrupt:
            return FieldViolation(path, "is not a valid message field")
        if pos > len(data):
            return FieldViolation(path, "is truncated")
    return None


def _chunk_fault(field: FieldDescriptor | None, chunk: bytes, path: str) -> FieldViolation | None:
    if field is None:
        return None
    if field.type == FieldDescriptor.TYPE_STRING:
        try:
            chunk.decode("utf-8")
        except UnicodeDecodeError:
            return FieldViolation(path, "is not valid UTF-8")
        return None
    if field.message_type is not None:
        return _wire_fault(field.message_type, chunk, f"{path}.")
    return None


def undecodable(descriptor: Descriptor | None, data: bytes) -> InvalidInput:
    """The InvalidInput of request bytes that failed to decode, naming the field at fault
    when the wire format shows it (else the request as a whole)."""
    fault = _wire_fault(descriptor, data, "") if descriptor is not None else None
    return InvalidInput([fault or FieldViolation("request", "is not a valid message")])
