"""Work orders' domain (seed 001 §2.21B): creation, legal and illegal status moves, the
user's cancel and forget, their reason-coded events, and listing order."""

from __future__ import annotations

import pytest

from memmesh.engines.current_state.domain.work_orders import (
    MAX_PAGE,
    WORK_ORDER_EVENT_TYPE,
    Reason,
    Status,
    WorkOrder,
    WorkOrderDraft,
    canceled_by_user,
    page_size,
    suppressed,
    upserted,
    validate_draft,
)
from memmesh.errors import InvalidInput, PreconditionFailed

NOW_US = 1_767_225_600_000_000


def draft(status: Status | None = Status.CLARIFY, **fields: str) -> WorkOrderDraft:
    values = {"title": "book a table for Friday", "pending_question": "For how many people?"}
    values.update(fields)
    return WorkOrderDraft("wo-1", status=status, **values)


def created(status: Status = Status.CLARIFY) -> WorkOrder:
    return upserted(None, draft(status), NOW_US).order


def test_a_new_order_is_created_at_revision_one_with_a_created_event() -> None:
    changed = upserted(None, draft(), NOW_US)
    assert changed.order.revision == 1 and changed.order.status == Status.CLARIFY
    assert changed.order.create_us == changed.order.update_us == NOW_US
    assert changed.event is not None and changed.event.reason == Reason.CREATED
    assert not changed.unchanged


def test_the_same_upsert_again_changes_nothing() -> None:
    order = created()
    again = upserted(order, draft(), NOW_US + 5)
    assert again.unchanged and again.event is None and again.order == order


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (Status.DRAFT, Reason.DRAFTED),
        (Status.CONFIRM, Reason.CONFIRM_REQUESTED),
        (Status.DONE, Reason.COMPLETED),
        (Status.CANCELED, Reason.CANCELED),
    ],
)
def test_every_status_change_of_a_pending_order_has_its_reason(
    status: Status, reason: Reason
) -> None:
    changed = upserted(created(), draft(status), NOW_US + 10)
    assert changed.order.status == status and changed.order.revision == 2
    assert changed.order.update_us == NOW_US + 10
    assert changed.event is not None
    assert (changed.event.reason, changed.event.previous_status) == (reason, "CLARIFY")


def test_an_edit_without_a_status_change_writes_the_order_but_no_event() -> None:
    changed = upserted(created(), draft(pending_question="Which time?"), NOW_US + 10)
    assert not changed.unchanged and changed.event is None
    assert changed.order.pending_question == "Which time?" and changed.order.revision == 2


@pytest.mark.parametrize("closed", [Status.DONE, Status.CANCELED])
@pytest.mark.parametrize("asked", [Status.DRAFT, Status.CLARIFY, Status.CONFIRM])
def test_a_closed_order_never_becomes_pending_again(closed: Status, asked: Status) -> None:
    order = upserted(created(), draft(closed), NOW_US + 1).order
    with pytest.raises(PreconditionFailed) as refused:
        upserted(order, draft(asked), NOW_US + 2)
    assert refused.value.reason == "WORK_ORDER_CLOSED"
    assert closed.value in refused.value.message and asked.value in refused.value.message


def test_done_cannot_become_canceled_and_canceled_cannot_become_done() -> None:
    done = upserted(created(), draft(Status.DONE), NOW_US + 1).order
    with pytest.raises(PreconditionFailed):
        upserted(done, draft(Status.CANCELED), NOW_US + 2)
    with pytest.raises(PreconditionFailed):
        canceled_by_user(done, NOW_US + 2)
    canceled = upserted(created(), draft(Status.CANCELED), NOW_US + 1).order
    with pytest.raises(PreconditionFailed):
        upserted(canceled, draft(Status.DONE), NOW_US + 2)


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (WorkOrderDraft("wo-1", "", Status.DRAFT), "title"),
        (WorkOrderDraft("wo-1", "   ", Status.DRAFT), "title"),
        (WorkOrderDraft("wo-1", "x" * 121, Status.DRAFT), "title"),
        (WorkOrderDraft("wo-1", "t", None), "status"),
        (WorkOrderDraft("", "t", Status.DRAFT), "work_order_id"),
        (WorkOrderDraft("wo-1", "t", Status.DRAFT, pending_question="q" * 201), "pending_question"),
        (WorkOrderDraft("wo-1", "t", Status.DRAFT, summary="s" * 501), "summary"),
    ],
)
def test_bad_input_is_refused_naming_the_field(bad: WorkOrderDraft, field: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        validate_draft(bad)
    assert [v.field for v in refused.value.violations] == [field]


def test_texts_are_kept_on_one_line() -> None:
    clean = validate_draft(draft(title="  book\n a   table ", pending_question="For\thow many?"))
    assert (clean.title, clean.pending_question) == ("book a table", "For how many?")


def test_the_users_cancel_is_canceled_by_user_and_idempotent() -> None:
    changed = canceled_by_user(created(Status.CONFIRM), NOW_US + 1)
    assert changed.order.status == Status.CANCELED
    assert changed.event is not None and changed.event.reason == Reason.CANCELED_BY_USER
    assert changed.event.previous_status == "CONFIRM"
    assert canceled_by_user(changed.order, NOW_US + 2).unchanged


def test_forget_marks_do_not_mention_and_leaves_status_and_update_time() -> None:
    order = created()
    changed = suppressed(order, NOW_US + 100)
    assert changed.order.do_not_mention and changed.order.status == order.status
    assert changed.order.update_us == order.update_us
    assert changed.event is not None and changed.event.reason == Reason.FORGOTTEN
    assert suppressed(changed.order, NOW_US + 200).unchanged


def test_an_upsert_keeps_do_not_mention() -> None:
    quiet = suppressed(created(), NOW_US + 1).order
    assert upserted(quiet, draft(Status.CONFIRM), NOW_US + 2).order.do_not_mention


def test_the_ledger_event_carries_ids_and_reason_never_the_orders_text() -> None:
    changed = upserted(None, draft(), NOW_US)
    assert changed.event is not None
    event = changed.event.ledger_event()
    assert event.event_type == WORK_ORDER_EVENT_TYPE and event.reason_code == "CREATED"
    assert event.idempotency_key == "work_order:wo-1:1"
    values = " ".join(str(value) for _, value in event.attributes)
    assert "table" not in values and "people" not in values
    assert dict(event.attributes)["status"] == "CLARIFY"


def test_page_size_defaults_and_caps() -> None:
    assert page_size(0) == 20 and page_size(3) == 3 and page_size(10_000) == MAX_PAGE
