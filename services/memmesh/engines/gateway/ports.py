"""What the gateway's Ingest and control use cases need from the outside: the peer engines
(each call with a deadline in seconds, failing with DependencyFailed) and the effect outbox."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from memmesh.atom_extractor.v1 import atom_extractor_service_pb2 as extractor_pb
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.outbox import Delivery, Effect
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb


class TurnArchive(Protocol):
    """ThreadStore's archive, as Ingest writes to it."""

    async def append_turn(
        self, request: thread_pb.AppendTurnRequest, timeout_s: float
    ) -> thread_pb.AppendTurnResponse: ...


class SessionsPeer(Protocol):
    """ThreadStore's sessions, as the control RPCs open and close them."""

    async def open_session(
        self, request: thread_pb.OpenSessionRequest, timeout_s: float
    ) -> thread_pb.OpenSessionResponse: ...

    async def close_session(
        self, request: thread_pb.CloseSessionRequest, timeout_s: float
    ) -> thread_pb.CloseSessionResponse: ...


class TurnRedactor(Protocol):
    """ThreadStore's redaction, as a forget's queued effect reaches the archive."""

    async def redact_turns(
        self, request: thread_pb.RedactTurnsRequest, timeout_s: float
    ) -> thread_pb.RedactTurnsResponse: ...


class CurrentStatePeer(Protocol):
    async def get(self, request: state_pb.GetRequest, timeout_s: float) -> state_pb.GetResponse: ...

    async def apply(
        self, request: state_pb.ApplyRequest, timeout_s: float
    ) -> state_pb.ApplyResponse: ...


class WorkOrdersPeer(Protocol):
    """CurrentState's work orders (seed 001 §2.21B)."""

    async def upsert_work_order(
        self, request: state_pb.UpsertWorkOrderRequest, timeout_s: float
    ) -> state_pb.UpsertWorkOrderResponse: ...

    async def list_work_orders(
        self, request: state_pb.ListWorkOrdersRequest, timeout_s: float
    ) -> state_pb.ListWorkOrdersResponse: ...

    async def run_work_order_command(
        self, request: state_pb.RunWorkOrderCommandRequest, timeout_s: float
    ) -> state_pb.RunWorkOrderCommandResponse: ...


class ExtractionPeer(Protocol):
    """AtomExtractor's extraction of a turn, as an outbox effect delivers it."""

    async def process(
        self, request: extractor_pb.ProcessRequest, timeout_s: float
    ) -> extractor_pb.ProcessResponse: ...


class CapsulePeer(Protocol):
    """AtomExtractor's capsule, as the control RPCs command and read it."""

    async def run_command(
        self, request: extractor_pb.RunCommandRequest, timeout_s: float
    ) -> extractor_pb.RunCommandResponse: ...

    async def list_atoms(
        self, request: extractor_pb.ListAtomsRequest, timeout_s: float
    ) -> extractor_pb.ListAtomsResponse: ...

    async def list_effects(
        self, request: extractor_pb.ListEffectsRequest, timeout_s: float
    ) -> extractor_pb.ListEffectsResponse: ...


class ExposureGuardPeer(Protocol):
    async def recall_summary(
        self, request: guard_pb.RecallSummaryRequest, timeout_s: float
    ) -> guard_pb.RecallSummaryResponse: ...

    async def set_rule(
        self, request: guard_pb.SetRuleRequest, timeout_s: float
    ) -> guard_pb.SetRuleResponse: ...


class EffectOutbox(Protocol):
    """The part of `memmesh.outbox.Outbox` the use cases call."""

    async def enqueue_and_deliver(
        self,
        tenant_id: str,
        user_id: str,
        effects: Sequence[Effect],
        timeout_s: float,
        patient: frozenset[str] = frozenset(),
    ) -> Delivery: ...

    async def count_pending(self, tenant_id: str, user_id: str, kind: str | None = None) -> int: ...
