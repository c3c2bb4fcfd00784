"""CurrentState as the AtomExtractor's StatePort."""

from __future__ import annotations

from memmesh.current_state.v1 import current_state_service_pb2 as state_pb
from memmesh.current_state.v1 import current_state_service_pb2_grpc as state_grpc
from memmesh.engines.atom_extractor.domain import reasons
from memmesh.engines.atom_extractor.mapping import scope_message
from memmesh.runtime.errors import call_engine
from memmesh.runtime.timeconv import timestamp_of


class GrpcState:
    def __init__(self, stub: state_grpc.CurrentStateServiceStub) -> None:
        self._stub = stub

    async def apply_command(
        self,
        tenant_id: str,
        user_id: str,
        command: str,
        idempotency_key: str,
        now_us: int,
        resume_only: bool = False,
    ) -> None:
        if command == "FORGET_EVERYTHING":
            change = state_pb.StateChange(forget_profile=state_pb.ForgetProfile())
        elif command == "REMEMBER_EVERYTHING":
            change = state_pb.StateChange(
                set_memory_retention_mode=state_pb.RETENTION_MODE_REMEMBER_EVERYTHING
            )
        elif resume_only:
            # Auto-resume goes off; "only recall if I ask", if said before, stays as it is.
            current = await call_engine(
                "current_state",
                self._stub.Get(state_pb.GetRequest(scope=scope_message(tenant_id, user_id))),
            )
            change = state_pb.StateChange(
                set_resume_preferences=state_pb.ResumePreferences(
                    auto_resume_disabled=True,
                    recall_only_when_asked=current.state.resume_preferences.recall_only_when_asked,
                )
            )
        else:
            change = state_pb.StateChange(
                set_resume_preferences=state_pb.ResumePreferences(
                    auto_resume_disabled=True, recall_only_when_asked=True
                )
            )
        request = state_pb.ApplyRequest(
            scope=scope_message(tenant_id, user_id),
            change=change,
            any_version=True,
            reason_code=reasons.USER_COMMAND,
            idempotency_key=idempotency_key,
            now=timestamp_of(now_us),
        )
        await call_engine("current_state", self._stub.Apply(request))
