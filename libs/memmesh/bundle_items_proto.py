"""The wire side of `memmesh.bundle_items`: guard items as ExposureGuard FilterItems."""

from __future__ import annotations

from collections.abc import Iterable

from memmesh.bundle_items import GuardItem
from memmesh.common.v1 import memory_pb2
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb


def exposure_name(number: int) -> str:
    """The Exposure value's name without its prefix ("SAFE_TO_SPEAK"); 0 is "UNSPECIFIED"."""
    return memory_pb2.Exposure.Name(number).removeprefix("EXPOSURE_")  # type: ignore[arg-type]  # an int is a ValueType at runtime


def filter_items(items: Iterable[GuardItem]) -> list[guard_pb.FilterItem]:
    """Guard items as the FilterItems of a FilterRequest."""
    return [
        guard_pb.FilterItem(
            item_id=item.item_id,
            key=item.key,
            topics=item.topics,
            thread_id=item.thread_id,
            exposure=memory_pb2.Exposure.Value("EXPOSURE_" + (item.exposure or "UNSPECIFIED")),
            pull_only=item.pull_only,
            text=item.text,
            atom_id=item.atom_id,
        )
        for item in items
    ]
