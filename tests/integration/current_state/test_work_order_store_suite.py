"""One contract suite for the work order store, on SQLite and on PostgreSQL: rows round-trip,
saves are compare-and-set on the revision and queue the change's ledger event with the row,
listing is most recent first then by id (byte order), filtered by pending and mentionable."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
import pytest_asyncio

from memmesh.engines.current_state.adapters.sql_store import SqlStateStore
from memmesh.engines.current_state.adapters.work_order_store import (
    WORK_ORDER_EVENT,
    SqlWorkOrderStore,
    event_of,
)
from memmesh.engines.current_state.domain.work_orders import (
    Reason,
    Status,
    WorkOrder,
    WorkOrderDraft,
    suppressed,
    upserted,
)
from memmesh.outbox import Outbox

NOW_US = 1_767_225_600_000_000


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def opened(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[SqlWorkOrderStore, Outbox]]:
    url = "sqlite" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    state = await SqlStateStore.open(url, tmp_path)
    yield SqlWorkOrderStore(state.database), Outbox(state.database, {})
    await state.close()


def user() -> tuple[str, str]:
    token = uuid.uuid4().hex[:12]
    return f"t-{token}", f"u-{token}"


def order(work_order_id: str, update_us: int, status: Status = Status.CLARIFY) -> WorkOrder:
    draft = WorkOrderDraft(work_order_id, f"title {work_order_id}", status, "When?", "", "th-1")
    return upserted(None, draft, update_us).order


async def test_an_order_round_trips_every_field_and_queues_its_event(
    opened: tuple[SqlWorkOrderStore, Outbox],
) -> None:
    store, outbox = opened
    who = user()
    changed = upserted(
        None, WorkOrderDraft("wo-1", "book a table", Status.CONFIRM, "Friday?", "for 4", "th"), 7
    )
    assert await store.save(*who, changed.order, 0, changed.event)
    assert await store.get(*who, "wo-1") == changed.order
    [queued] = await outbox.pending(*who)
    assert queued.kind == WORK_ORDER_EVENT and queued.key == "work_order:wo-1:1"
    assert event_of(queued) == changed.event
    assert b"table" not in queued.payload  # the event carries no text of the order


async def test_saves_are_compare_and_set_on_the_revision(
    opened: tuple[SqlWorkOrderStore, Outbox],
) -> None:
    store, outbox = opened
    who = user()
    first = order("wo-1", NOW_US)
    assert await store.save(*who, first, 0, None)
    assert not await store.save(*who, first, 0, None)  # created already
    quiet = suppressed(first, NOW_US + 1)
    assert not await store.save(*who, quiet.order, 5, quiet.event)  # stale revision
    assert await outbox.pending(*who) == []  # a refused save queues nothing
    assert await store.save(*who, quiet.order, 1, quiet.event)
    stored = await store.get(*who, "wo-1")
    assert stored is not None and stored.do_not_mention and stored.revision == 2
    [queued] = await outbox.pending(*who)
    assert event_of(queued).reason == Reason.FORGOTTEN


async def test_listing_is_most_recent_first_then_id_and_filters(
    opened: tuple[SqlWorkOrderStore, Outbox],
) -> None:
    store, _ = opened
    who = user()
    for stored in (
        order("b", NOW_US),
        order("a", NOW_US),
        order("B", NOW_US),
        order("new", NOW_US + 9),
        order("done", NOW_US + 20, Status.DONE),
        replace(order("quiet", NOW_US + 30), do_not_mention=True),
    ):
        assert await store.save(*who, stored, 0, None)
    ids = [o.work_order_id for o in await store.list(*who, False, False, 20)]
    assert ids == ["quiet", "done", "new", "B", "a", "b"]
    pending = [o.work_order_id for o in await store.list(*who, True, True, 20)]
    assert pending == ["new", "B", "a", "b"]
    assert [o.work_order_id for o in await store.list(*who, True, False, 2)] == ["quiet", "new"]
    assert await store.list(*user(), False, False, 20) == []


async def test_forget_user_deletes_only_that_users_orders(
    opened: tuple[SqlWorkOrderStore, Outbox],
) -> None:
    store, _ = opened
    who, other = user(), user()
    assert await store.save(*who, order("wo-1", NOW_US), 0, None)
    assert await store.save(*other, order("wo-1", NOW_US), 0, None)
    assert await store.forget_user(*who) == 1
    assert await store.get(*who, "wo-1") is None
    assert await store.get(*other, "wo-1") is not None
