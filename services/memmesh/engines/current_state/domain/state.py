"""Current State's domain: the per-user state, changes to it, and its checksum.

A change is a kind plus typed values, which is exactly what its ledger event carries,
so the live projection and a rebuild from the ledger apply the very same function.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, replace
from zoneinfo import available_timezones

from memmesh.errors import FieldViolation, InvalidInput
from memmesh.ledger_event import AttributeValue, EventTime, NewEvent

STATE_EVENT_TYPE = "STATE_CHANGED"
# A fill sets each given profile field only while it is empty (seed 001 §2.11.10: a value
# Current State holds is never overwritten from conversation).
FILLABLE_FIELDS = ("display_name", "primary_language")
CONTACT_PREFERENCES = ("SPEAK", "TEXT")
RETENTION_MODES = ("DEFAULT", "REMEMBER_EVERYTHING")
_LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*")
_TIMEZONES = frozenset(available_timezones())

Value = str | int | bool


@dataclass(frozen=True)
class DeviceSetting:
    device_id: str
    wake_threshold_bp: int


@dataclass(frozen=True)
class UserState:
    """Operational truth about one user; version 0 is a user never seen."""

    display_name: str = ""
    primary_language: str = ""
    contact_preference: str = ""
    timezone: str = ""
    retention_mode: str = "DEFAULT"
    auto_resume_disabled: bool = False
    recall_only_when_asked: bool = False
    device_settings: tuple[DeviceSetting, ...] = ()
    last_session_id: str = ""
    last_interaction_us: int = 0
    last_applied_package_id: str = ""
    version: int = 0
    ledger_sequence: int = 0


@dataclass(frozen=True)
class Change:
    """One change: its kind and typed values, sorted by name."""

    kind: str
    values: tuple[tuple[str, Value], ...]

    def value(self, name: str) -> Value:
        return dict(self.values)[name]


def _check(ok: bool, field: str, why: str) -> None:
    if not ok:
        raise InvalidInput([FieldViolation(field, why)])


def validate_change(change: Change) -> None:
    """Refuse values the state must never hold, naming the request field."""
    match change.kind:
        case "display_name":
            name = str(change.value("value"))
            _check(0 < len(name) <= 100, "change.set_display_name", "must be 1 to 100 characters")
        case "primary_language":
            tag = str(change.value("value"))
            _check(
                bool(_LANGUAGE_TAG.fullmatch(tag)),
                "change.set_primary_language",
                "must be a BCP 47 tag",
            )
        case "contact_preference":
            _check(
                change.value("value") in CONTACT_PREFERENCES,
                "change.set_contact_preference",
                "must be SPEAK or TEXT",
            )
        case "timezone":
            _check(
                change.value("value") in _TIMEZONES,
                "change.set_timezone",
                "must be an IANA time zone name",
            )
        case "retention_mode":
            _check(
                change.value("value") in RETENTION_MODES,
                "change.set_memory_retention_mode",
                "must be set",
            )
        case "device_setting":
            _check(
                bool(change.value("device_id")),
                "change.set_device_setting.device_id",
                "is required",
            )
            threshold = int(change.value("wake_threshold_bp"))
            _check(
                0 <= threshold <= 10_000,
                "change.set_device_setting.wake_threshold_bp",
                "must be 0..10000",
            )
        case "last_applied_package_id":
            _check(
                0 < len(str(change.value("value"))) <= 128,
                "change.set_last_applied_package_id",
                "must be 1 to 128 characters",
            )
        case "fill_profile":
            given = dict(change.values)
            _check(
                bool(given) and set(given) <= set(FILLABLE_FIELDS),
                "change.fill_empty_profile",
                "give a field",
            )
            for name, value in given.items():
                validate_change(Change(name, (("value", value),)))
        case "resume_preferences" | "interaction":
            pass
        case "forget_profile":
            _check(not change.values, "change.forget_profile", "carries no values")
        case other:
            raise InvalidInput([FieldViolation("change", f"unknown change {other!r}")])


def apply_change(state: UserState, change: Change, ledger_sequence: int) -> UserState:
    """The state after one change recorded at ledger_sequence."""
    match change.kind:
        case "display_name":
            state = replace(state, display_name=str(change.value("value")))
        case "primary_language":
            state = replace(state, primary_language=str(change.value("value")))
        case "contact_preference":
            state = replace(state, contact_preference=str(change.value("value")))
        case "timezone":
            state = replace(state, timezone=str(change.value("value")))
        case "retention_mode":
            state = replace(state, retention_mode=str(change.value("value")))
        case "resume_preferences":
            state = replace(
                state,
                auto_resume_disabled=bool(change.value("auto_resume_disabled")),
                recall_only_when_asked=bool(change.value("recall_only_when_asked")),
            )
        case "device_setting":
            setting = DeviceSetting(
                str(change.value("device_id")), int(change.value("wake_threshold_bp"))
            )
            others = [d for d in state.device_settings if d.device_id != setting.device_id]
            state = replace(
                state, device_settings=tuple(sorted([*others, setting], key=lambda d: d.device_id))
            )
        case "interaction":
            at = int(change.value("interaction_time"))
            # Turns may arrive out of order; the latest interaction wins whatever the order.
            if at >= state.last_interaction_us:
                state = replace(
                    state, last_interaction_us=at, last_session_id=str(change.value("session_id"))
                )
        case "last_applied_package_id":
            state = replace(state, last_applied_package_id=str(change.value("value")))
        case "forget_profile":
            # Forget everything about me: nothing of the user stays, as for a new user.
            state = UserState(version=state.version, ledger_sequence=state.ledger_sequence)
        case "fill_profile":
            filled = fills(state, change)
            state = replace(
                state,
                display_name=filled.get("display_name", state.display_name),
                primary_language=filled.get("primary_language", state.primary_language),
            )
    return replace(state, version=state.version + 1, ledger_sequence=ledger_sequence)


def fills(state: UserState, change: Change) -> dict[str, str]:
    """The fields a fill_profile change sets on this state: the given ones still empty."""
    return {name: str(value) for name, value in change.values if not getattr(state, name)}


def state_event(change: Change, reason_code: str, idempotency_key: str, now_us: int) -> NewEvent:
    """The ledger event of a change: its kind and typed values (times as time values)."""
    attributes: list[tuple[str, AttributeValue]] = [("change", change.kind)]
    for name, value in change.values:
        attributes.append((name, EventTime(int(value)) if name.endswith("_time") else value))
    return NewEvent(idempotency_key, STATE_EVENT_TYPE, reason_code, tuple(attributes), now_us)


def checksum(state: UserState) -> str:
    """SHA-256 hex over the canonical JSON of the state."""
    encoded = json.dumps(asdict(state), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(encoded.encode()).hexdigest()


def encode_state(state: UserState) -> str:
    """The state as stored."""
    return json.dumps(asdict(state), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def decode_state(stored: str) -> UserState:
    """A state from its stored form."""
    fields = json.loads(stored)
    fields["device_settings"] = tuple(DeviceSetting(**d) for d in fields["device_settings"])
    return UserState(**fields)
