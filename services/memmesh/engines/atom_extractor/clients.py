"""gRPC implementations of the outbound ports."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import TypeVar

import grpc

from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.engines.atom_extractor import mapping, reasons
from memmesh.engines.atom_extractor.capsule import AtomRecord
from memmesh.engines.atom_extractor.ports import PermanentFailure
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.ledger.v1 import ledger_service_pb2 as ledger_pb
from memmesh.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2 as index_pb
from memmesh.retrieval_ranker.v1 import retrieval_ranker_service_pb2_grpc as index_grpc
from memmesh.runtime.timeconv import timestamp_of
from memmesh.thread_store.v1 import thread_store_service_pb2 as thread_pb
from memmesh.thread_store.v1 import thread_store_service_pb2_grpc as thread_grpc

T = TypeVar("T")
# Codes that say the request itself is wrong or clashes: sending it again cannot succeed.
_PERMANENT = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.NOT_FOUND,
}


async def _call(pending: Awaitable[T]) -> T:
    try:
        return await pending
    except grpc.aio.AioRpcError as error:
        if error.code() in _PERMANENT:
            raise PermanentFailure(f"{error.code().name}: {error.details()}") from error
        raise


def _scope(tenant_id: str, user_id: str) -> scope_pb2.UserScope:
    return scope_pb2.UserScope(tenant_id=tenant_id, user_id=user_id)


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
        await _call(
            self._stub.Append(
                ledger_pb.AppendRequest(scope=_scope(tenant_id, user_id), events=inputs)
            )
        )


class GrpcIndex:
    def __init__(self, stub: index_grpc.RetrievalRankerServiceStub) -> None:
        self._stub = stub

    async def upsert(self, tenant_id: str, user_id: str, atoms: Sequence[AtomRecord]) -> None:
        documents = [
            index_pb.Document(
                doc_id=atom.atom_id,
                kind=index_pb.DOCUMENT_KIND_ATOM,
                text=atom.text,
                atom=mapping.atom_message(atom),
                evidence_turn_ids=list(atom.evidence_turn_ids),
                time=timestamp_of(atom.create_time_us),
            )
            for atom in atoms
        ]
        await _call(
            self._stub.Upsert(
                index_pb.UpsertRequest(scope=_scope(tenant_id, user_id), documents=documents)
            )
        )

    async def remove(self, tenant_id: str, user_id: str, atom_ids: Sequence[str]) -> None:
        await _call(
            self._stub.Remove(
                index_pb.RemoveRequest(scope=_scope(tenant_id, user_id), doc_ids=list(atom_ids))
            )
        )


class GrpcGuard:
    def __init__(self, stub: guard_grpc.ExposureGuardServiceStub) -> None:
        self._stub = stub

    async def may_store(self, tenant_id: str, user_id: str, atom: AtomRecord) -> bool:
        reply = await _call(
            self._stub.CheckStore(
                guard_pb.CheckStoreRequest(
                    scope=_scope(tenant_id, user_id),
                    key=atom.key,
                    topics=list(atom.topics),
                    text=atom.text,
                    atom_id=atom.atom_id,
                )
            )
        )
        return bool(reply.allowed)

    async def set_rule(
        self, tenant_id: str, user_id: str, kind: str, target_type: str, target: str, now_us: int
    ) -> None:
        rule = guard_pb.Rule(
            kind=guard_pb.RuleKind.Value(f"RULE_KIND_{kind}"),
            target_type=guard_pb.TargetType.Value(f"TARGET_TYPE_{target_type}"),
            target=target,
        )
        await _call(
            self._stub.SetRule(
                guard_pb.SetRuleRequest(
                    scope=_scope(tenant_id, user_id),
                    rule=rule,
                    now=timestamp_of(now_us),
                    reason_code=reasons.USER_COMMAND,
                )
            )
        )


class GrpcState:
    def __init__(self, stub: state_grpc.CurrentStateServiceStub) -> None:
        self._stub = stub

    async def apply_command(
        self, tenant_id: str, user_id: str, command: str, idempotency_key: str, now_us: int
    ) -> None:
        if command == "REMEMBER_EVERYTHING":
            change = state_pb.StateChange(
                set_memory_retention_mode=state_pb.RETENTION_MODE_REMEMBER_EVERYTHING
            )
        else:
            change = state_pb.StateChange(
                set_resume_preferences=state_pb.ResumePreferences(
                    auto_resume_disabled=True, recall_only_when_asked=True
                )
            )
        await _call(
            self._stub.Apply(
                state_pb.ApplyRequest(
                    scope=_scope(tenant_id, user_id),
                    change=change,
                    any_version=True,
                    reason_code=reasons.USER_COMMAND,
                    idempotency_key=idempotency_key,
                    now=timestamp_of(now_us),
                )
            )
        )


class GrpcThreads:
    def __init__(self, stub: thread_grpc.ThreadStoreServiceStub) -> None:
        self._stub = stub

    async def restrict_turns(
        self, tenant_id: str, user_id: str, turn_ids: Sequence[str], exposure: str
    ) -> None:
        await _call(
            self._stub.RestrictTurns(
                thread_pb.RestrictTurnsRequest(
                    scope=_scope(tenant_id, user_id),
                    turn_ids=list(turn_ids),
                    exposure=memory_pb2.Exposure.Value(f"EXPOSURE_{exposure}"),
                )
            )
        )

    async def forget_thread(
        self, tenant_id: str, user_id: str, thread_id: str, now_us: int
    ) -> None:
        await _call(
            self._stub.ForgetThread(
                thread_pb.ForgetThreadRequest(
                    scope=_scope(tenant_id, user_id), thread_id=thread_id, now=timestamp_of(now_us)
                )
            )
        )
