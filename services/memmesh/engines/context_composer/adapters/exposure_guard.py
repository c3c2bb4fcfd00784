"""The ExposureGuard as the composer's Guard (Tier 1: nothing unfiltered ever leaves)."""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.bundle_items import GuardItem
from memmesh.bundle_items_proto import filter_items
from memmesh.engines.context_composer import mapping
from memmesh.engines.context_composer.adapters.calls import scope_of
from memmesh.engines.context_composer.domain.model import GuardVerdict
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.runtime.errors import call_engine


class GrpcGuard:
    def __init__(self, stub: guard_grpc.ExposureGuardServiceStub) -> None:
        self._stub = stub

    async def filter(
        self,
        tenant_id: str,
        user_id: str,
        channel: str,
        items: Sequence[GuardItem],
        speak_text_allowed: bool,
        user_asked: bool,
    ) -> GuardVerdict:
        request = guard_pb.FilterRequest(
            scope=scope_of(tenant_id, user_id),
            channel=mapping.channel_number(channel),
            items=filter_items(items),
            speak_text_allowed=speak_text_allowed,
            user_asked=user_asked,
        )
        return mapping.verdict_of(await call_engine("exposure_guard", self._stub.Filter(request)))
