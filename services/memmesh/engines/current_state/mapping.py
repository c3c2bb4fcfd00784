"""The only place that knows both Current State's proto and domain types."""

from __future__ import annotations

from memmesh.current_state.v1 import current_state_service_pb2 as pb
from memmesh.engines.current_state.domain.state import FILLABLE_FIELDS, Change, UserState, Value
from memmesh.engines.current_state.domain.work_orders import (
    Command,
    Status,
    WorkOrder,
    WorkOrderDraft,
)
from memmesh.errors import FieldViolation, InvalidInput
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.runtime.timeconv import micros_of, timestamp_of

_SIMPLE_CHANGES = {
    "set_display_name": "display_name",
    "set_primary_language": "primary_language",
    "set_timezone": "timezone",
    "set_last_applied_package_id": "last_applied_package_id",
}


def _enum_name(enum: object, number: int, prefix: str) -> str:
    # UNSPECIFIED maps to "" so that domain validation refuses it with the field's name.
    name = enum.Name(number)  # type: ignore[attr-defined]
    return "" if name.endswith("UNSPECIFIED") else name.removeprefix(prefix)


def change_of(message: pb.StateChange) -> Change:
    """The domain change a request carries."""
    which = message.WhichOneof("change")
    values: dict[str, Value]
    match which:
        case None:
            raise InvalidInput([FieldViolation("change", "one change must be set")])
        case "set_contact_preference":
            kind = "contact_preference"
            values = {
                "value": _enum_name(
                    pb.ContactPreference, message.set_contact_preference, "CONTACT_PREFERENCE_"
                )
            }
        case "set_memory_retention_mode":
            kind = "retention_mode"
            values = {
                "value": _enum_name(
                    pb.RetentionMode, message.set_memory_retention_mode, "RETENTION_MODE_"
                )
            }
        case "set_resume_preferences":
            kind = "resume_preferences"
            prefs = message.set_resume_preferences
            values = {
                "auto_resume_disabled": prefs.auto_resume_disabled,
                "recall_only_when_asked": prefs.recall_only_when_asked,
            }
        case "set_device_setting":
            kind = "device_setting"
            setting = message.set_device_setting
            values = {
                "device_id": setting.device_id,
                "wake_threshold_bp": setting.wake_threshold_bp,
            }
        case "record_interaction":
            kind = "interaction"
            record = message.record_interaction
            values = {
                "session_id": record.session_id,
                "interaction_time": micros_of(record.interaction_time),
            }
        case "forget_profile":
            kind, values = "forget_profile", {}
        case "fill_empty_profile":
            kind = "fill_profile"
            fill = message.fill_empty_profile
            values = {name: value for name in FILLABLE_FIELDS if (value := getattr(fill, name))}
        case simple:
            kind = _SIMPLE_CHANGES[simple]
            values = {"value": getattr(message, simple)}
    return Change(kind, tuple(sorted(values.items())))


def state_message(state: UserState) -> pb.UserState:
    """The state as the API returns it."""
    message = pb.UserState(
        profile=pb.Profile(
            display_name=state.display_name,
            primary_language=state.primary_language,
            contact_preference=pb.ContactPreference.Value(
                f"CONTACT_PREFERENCE_{state.contact_preference or 'UNSPECIFIED'}"
            ),
            timezone=state.timezone,
        ),
        memory_retention_mode=pb.RetentionMode.Value(f"RETENTION_MODE_{state.retention_mode}"),
        resume_preferences=pb.ResumePreferences(
            auto_resume_disabled=state.auto_resume_disabled,
            recall_only_when_asked=state.recall_only_when_asked,
        ),
        device_settings=[
            pb.DeviceSetting(device_id=d.device_id, wake_threshold_bp=d.wake_threshold_bp)
            for d in state.device_settings
        ],
        last_session_id=state.last_session_id,
        last_applied_package_id=state.last_applied_package_id,
        version=state.version,
        ledger_sequence=state.ledger_sequence,
    )
    if state.last_interaction_us:
        message.last_interaction_time.CopyFrom(timestamp_of(state.last_interaction_us))
    return message


def change_of_event(event: ledger_pb.LedgerEvent) -> Change:
    """The change a state event records."""
    kind, values = "", []
    for attribute in event.attributes:
        which = attribute.WhichOneof("value")
        value: Value = (
            micros_of(attribute.time_value)
            if which == "time_value"
            else getattr(attribute, which or "string_value")
        )
        if attribute.name == "change":
            kind = str(value)
        else:
            values.append((attribute.name, value))
    return Change(kind, tuple(sorted(values)))


def work_order_draft(request: pb.UpsertWorkOrderRequest) -> WorkOrderDraft:
    """What an upsert asks the work order to be (UNSPECIFIED status as None)."""
    status = _enum_name(pb.WorkOrderStatus, request.status, "WORK_ORDER_STATUS_")
    return WorkOrderDraft(
        request.work_order_id,
        request.title,
        Status(status) if status else None,
        request.pending_question,
        request.summary,
        request.thread_id,
    )


def work_order_message(order: WorkOrder) -> pb.WorkOrder:
    """A work order as the API returns it."""
    return pb.WorkOrder(
        work_order_id=order.work_order_id,
        title=order.title,
        status=pb.WorkOrderStatus.Value(f"WORK_ORDER_STATUS_{order.status.value}"),
        pending_question=order.pending_question,
        summary=order.summary,
        thread_id=order.thread_id,
        create_time=timestamp_of(order.create_us),
        update_time=timestamp_of(order.update_us),
        do_not_mention=order.do_not_mention,
        revision=order.revision,
    )


def work_order_command(command: pb.WorkOrderCommand.ValueType) -> Command:
    """The domain command of a request (the validator has refused UNSPECIFIED already)."""
    name = _enum_name(pb.WorkOrderCommand, command, "WORK_ORDER_COMMAND_")
    if not name:
        raise InvalidInput([FieldViolation("command", "must be set")])
    return Command(name)
