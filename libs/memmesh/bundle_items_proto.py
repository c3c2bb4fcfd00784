"""The wire side of `memmesh.bundle_items`: guard items as ExposureGuard FilterItems."""

from __future__ import annotations

from collections.abc import Iterable

from memmesh.bundle_items import GuardItem
from memmesh.common.v1 import memory_pb2
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb

# Exposure names without their prefix ("SAFE_TO_SPEAK") and numbers, looked up once.
_EXPOSURE_NUMBER: dict[str, int] = {
    name.removeprefix("EXPOSURE_"): number for name, number in memory_pb2.Exposure.items()
}
_EXPOSURE_NAME: dict[int, str] = {number: name for name, number in _EXPOSURE_NUMBER.items()}


def exposure_name(number: int) -> str:
    """The Exposure value's name without its prefix ("SAFE_TO_SPEAK"); 0 is "UNSPECIFIED"."""
    return _EXPOSURE_NAME.get(number, "UNSPECIFIED")


def filter_items(items: Iterable[GuardItem]) -> list[guard_pb.FilterItem]:
    """Guard items as the FilterItems of a FilterRequest."""
    return [_filter_item(item) for item in items]


def _filter_item(item: GuardItem) -> guard_pb.FilterItem:
    # Only the fields an item sets are written: most items carry an id, a text and an
    # exposure only, and every field given costs whatever its value.
    message = guard_pb.FilterItem(
        item_id=item.item_id,
        text=item.text,
        exposure=memory_pb2.Exposure.ValueType(_EXPOSURE_NUMBER.get(item.exposure, 0)),
    )
    if item.key:
        message.key = item.key
    if item.topics:
        message.topics.extend(item.topics)
    if item.thread_id:
        message.thread_id = item.thread_id
    if item.pull_only:
        message.pull_only = True
    if item.atom_id:
        message.atom_id = item.atom_id
    return message
