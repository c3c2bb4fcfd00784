"""The ExposureGuard as the AtomExtractor's GuardPort."""

from __future__ import annotations

from memmesh.engines.atom_extractor.domain import reasons
from memmesh.engines.atom_extractor.domain.capsule import AtomRecord
from memmesh.engines.atom_extractor.mapping import scope_message
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as guard_pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as guard_grpc
from memmesh.runtime.errors import call_engine
from memmesh.runtime.timeconv import timestamp_of


class GrpcGuard:
    def __init__(self, stub: guard_grpc.ExposureGuardServiceStub) -> None:
        self._stub = stub

    async def may_store(self, tenant_id: str, user_id: str, atom: AtomRecord) -> bool:
        request = guard_pb.CheckStoreRequest(
            scope=scope_message(tenant_id, user_id),
            key=atom.key,
            topics=list(atom.topics),
            text=atom.text,
            atom_id=atom.atom_id,
        )
        reply = await call_engine("exposure_guard", self._stub.CheckStore(request))
        return bool(reply.allowed)

    async def set_rule(
        self, tenant_id: str, user_id: str, kind: str, target_type: str, target: str, now_us: int
    ) -> None:
        rule = guard_pb.Rule(
            kind=guard_pb.RuleKind.Value(f"RULE_KIND_{kind}"),
            target_type=guard_pb.TargetType.Value(f"TARGET_TYPE_{target_type}"),
            target=target,
        )
        request = guard_pb.SetRuleRequest(
            scope=scope_message(tenant_id, user_id),
            rule=rule,
            now=timestamp_of(now_us),
            reason_code=reasons.USER_COMMAND,
        )
        await call_engine("exposure_guard", self._stub.SetRule(request))

    async def forget_user(self, tenant_id: str, user_id: str, now_us: int) -> None:
        request = guard_pb.ForgetUserRequest(
            scope=scope_message(tenant_id, user_id), now=timestamp_of(now_us)
        )
        await call_engine("exposure_guard", self._stub.ForgetUser(request))
