"""Work orders (seed 001 §2.21B): pending work the orchestrator tracks for a user, and the
only authority on it. A work order is text and a status; memory never executes it.

Pending is DRAFT, CLARIFY or CONFIRM, which may follow one another in any order; DONE and
CANCELED are closed for good. Every status change, and the user's "forget that", gives one
reason-coded ledger event that carries ids, statuses and the reason, never the title or
the question (DESIGN.md: ledger events carry no conversation text).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from memmesh.errors import FieldViolation, InvalidInput, PreconditionFailed
from memmesh.ledger_event import NewEvent

WORK_ORDER_EVENT_TYPE = "WORK_ORDER_CHANGED"
MAX_TITLE_CHARS = 120
MAX_QUESTION_CHARS = 200
MAX_SUMMARY_CHARS = 500
MAX_THREAD_ID_CHARS = 128
DEFAULT_PAGE = 20
MAX_PAGE = 100


class Status(enum.StrEnum):
    DRAFT = "DRAFT"
    CLARIFY = "CLARIFY"
    CONFIRM = "CONFIRM"
    DONE = "DONE"
    CANCELED = "CANCELED"


PENDING = frozenset({Status.DRAFT, Status.CLARIFY, Status.CONFIRM})


class Command(enum.StrEnum):
    """What the user said about a work order."""

    CANCEL = "CANCEL"
    DO_NOT_MENTION = "DO_NOT_MENTION"


class Reason(enum.StrEnum):
    """Why a work order changed, as its ledger event's reason code says."""

    CREATED = "CREATED"
    DRAFTED = "DRAFTED"
    CLARIFY_REQUESTED = "CLARIFY_REQUESTED"
    CONFIRM_REQUESTED = "CONFIRM_REQUESTED"
    COMPLETED = "COMPLETED"
    CANCELED_BY_USER = "CANCELED_BY_USER"
    CANCELED = "CANCELED"
    FORGOTTEN = "FORGOTTEN"


# The reason an orchestrator's upsert records for the status it moves to.
_REASON_OF_STATUS = {
    Status.DRAFT: Reason.DRAFTED,
    Status.CLARIFY: Reason.CLARIFY_REQUESTED,
    Status.CONFIRM: Reason.CONFIRM_REQUESTED,
    Status.DONE: Reason.COMPLETED,
    Status.CANCELED: Reason.CANCELED,
}


@dataclass(frozen=True)
class WorkOrder:
    """One work order as stored; revision 0 is one never stored."""

    work_order_id: str
    title: str
    status: Status
    pending_question: str = ""
    summary: str = ""
    thread_id: str = ""
    create_us: int = 0
    update_us: int = 0
    do_not_mention: bool = False
    revision: int = 0

    @property
    def pending(self) -> bool:
        return self.status in PENDING


@dataclass(frozen=True)
class WorkOrderDraft:
    """What an orchestrator's upsert asks the order to be; status None is UNSPECIFIED."""

    work_order_id: str
    title: str
    status: Status | None
    pending_question: str = ""
    summary: str = ""
    thread_id: str = ""


@dataclass(frozen=True)
class StatusEvent:
    """A reason-coded change of one work order, as the ledger records it."""

    work_order_id: str
    revision: int
    previous_status: str
    status: Status
    reason: Reason
    do_not_mention: bool
    occur_us: int

    def ledger_event(self) -> NewEvent:
        """The ledger form: ids, statuses and the reason, never the order's text."""
        return NewEvent(
            f"work_order:{self.work_order_id}:{self.revision}",
            WORK_ORDER_EVENT_TYPE,
            self.reason.value,
            (
                ("work_order_id", self.work_order_id),
                ("previous_status", self.previous_status),
                ("status", self.status.value),
                ("do_not_mention", self.do_not_mention),
                ("revision", self.revision),
            ),
            self.occur_us,
        )


@dataclass(frozen=True)
class Changed:
    """A work order after a request: as it is to be stored, the event to record with it
    (a status change or a forget), and `unchanged` when the request found the order as it
    asked, so nothing is written."""

    order: WorkOrder
    event: StatusEvent | None = None
    unchanged: bool = False


def _check(ok: bool, field: str, why: str) -> None:
    if not ok:
        raise InvalidInput([FieldViolation(field, why)])


def _one_line(text: str) -> str:
    return " ".join(text.split())


def validate_draft(draft: WorkOrderDraft) -> WorkOrderDraft:
    """The draft with its texts on one line, or INVALID_ARGUMENT naming the bad field."""
    _check(bool(draft.work_order_id), "work_order_id", "is required")
    _check(draft.status is not None, "status", "must be set")
    title, question, summary = (
        _one_line(draft.title),
        _one_line(draft.pending_question),
        _one_line(draft.summary),
    )
    _check(0 < len(title) <= MAX_TITLE_CHARS, "title", f"must be 1 to {MAX_TITLE_CHARS} characters")
    _check(
        len(question) <= MAX_QUESTION_CHARS,
        "pending_question",
        f"must be at most {MAX_QUESTION_CHARS} characters",
    )
    _check(
        len(summary) <= MAX_SUMMARY_CHARS,
        "summary",
        f"must be at most {MAX_SUMMARY_CHARS} characters",
    )
    _check(
        len(draft.thread_id) <= MAX_THREAD_ID_CHARS,
        "thread_id",
        f"must be at most {MAX_THREAD_ID_CHARS} characters",
    )
    return replace(draft, title=title, pending_question=question, summary=summary)


def _closed(order: WorkOrder, asked: Status) -> PreconditionFailed:
    return PreconditionFailed(
        f"work order {order.work_order_id} is {order.status.value}; a closed work order "
        f"cannot become {asked.value}",
        reason="WORK_ORDER_CLOSED",
    )


def upserted(stored: WorkOrder | None, draft: WorkOrderDraft, now_us: int) -> Changed:
    """The order after an orchestrator's upsert of a validated draft."""
    assert draft.status is not None
    if stored is None:
        created = WorkOrder(
            draft.work_order_id,
            draft.title,
            draft.status,
            draft.pending_question,
            draft.summary,
            draft.thread_id,
            create_us=now_us,
            update_us=now_us,
            revision=1,
        )
        return Changed(created, _event(created, "", Reason.CREATED, now_us))
    if stored.status != draft.status and not stored.pending:
        raise _closed(stored, draft.status)
    asked = replace(
        stored,
        title=draft.title,
        status=draft.status,
        pending_question=draft.pending_question,
        summary=draft.summary,
        thread_id=draft.thread_id,
    )
    if asked == stored:
        return Changed(stored, unchanged=True)
    order = replace(asked, update_us=max(now_us, stored.update_us), revision=stored.revision + 1)
    if order.status == stored.status:
        return Changed(order)
    reason = _REASON_OF_STATUS[order.status]
    return Changed(order, _event(order, stored.status.value, reason, now_us))


def commanded(stored: WorkOrder, command: Command, now_us: int) -> Changed:
    """The order after what the user said about it."""
    match command:
        case Command.CANCEL:
            return canceled_by_user(stored, now_us)
        case Command.DO_NOT_MENTION:
            return suppressed(stored, now_us)


def canceled_by_user(stored: WorkOrder, now_us: int) -> Changed:
    """The order after the user's "cancel that"; DONE cannot be canceled."""
    if stored.status == Status.CANCELED:
        return Changed(stored, unchanged=True)
    if stored.status == Status.DONE:
        raise _closed(stored, Status.CANCELED)
    order = replace(
        stored,
        status=Status.CANCELED,
        update_us=max(now_us, stored.update_us),
        revision=stored.revision + 1,
    )
    return Changed(order, _event(order, stored.status.value, Reason.CANCELED_BY_USER, now_us))


def suppressed(stored: WorkOrder, now_us: int) -> Changed:
    """The order after the user's "forget that": never mentioned again, status untouched.
    Its update time stays, so the order's place among the others does not move."""
    if stored.do_not_mention:
        return Changed(stored, unchanged=True)
    order = replace(stored, do_not_mention=True, revision=stored.revision + 1)
    return Changed(order, _event(order, stored.status.value, Reason.FORGOTTEN, now_us))


def _event(order: WorkOrder, previous: str, reason: Reason, now_us: int) -> StatusEvent:
    return StatusEvent(
        order.work_order_id,
        order.revision,
        previous,
        order.status,
        reason,
        order.do_not_mention,
        now_us,
    )


def page_size(asked: int) -> int:
    """How many orders a list returns: 0 means the default, at most MAX_PAGE."""
    return min(asked or DEFAULT_PAGE, MAX_PAGE)
