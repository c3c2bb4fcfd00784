"""The Ledger as the AtomExtractor's LedgerPort."""

from __future__ import annotations

from collections.abc import Sequence

from memmesh.engines.atom_extractor.mapping import scope_message
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.runtime.errors import call_engine
from memmesh.runtime.timeconv import timestamp_of


def _attribute(name: str, kind: str, value: object) -> ledger_pb.Attribute:
    match kind:
        case "i":
            return ledger_pb.Attribute(name=name, int_value=int(value))  # type: ignore[call-overload]
        case "b":
            return ledger_pb.Attribute(name=name, bool_value=bool(value))
        case _:
            return ledger_pb.Attribute(name=name, string_value=str(value))


class GrpcLedger:
    def __init__(self, stub: ledger_grpc.LedgerServiceStub) -> None:
        self._stub = stub

    async def append(
        self, tenant_id: str, user_id: str, events: Sequence[dict[str, object]]
    ) -> None:
        inputs = [
            ledger_pb.EventInput(
                idempotency_key=str(event["idempotency_key"]),
                event_type=str(event["event_type"]),
                reason_code=str(event["reason_code"]),
                attributes=[_attribute(*a) for a in event["attributes"]],  # type: ignore[attr-defined]
                occur_time=timestamp_of(int(event["occur_time_us"])),  # type: ignore[call-overload]
            )
            for event in events
        ]
        request = ledger_pb.AppendRequest(scope=scope_message(tenant_id, user_id), events=inputs)
        await call_engine("ledger", self._stub.Append(request))
