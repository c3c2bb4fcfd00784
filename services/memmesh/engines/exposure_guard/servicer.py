"""gRPC adapter of the ExposureGuard: proto in, one use-case call, proto out."""

from __future__ import annotations

import grpc

from memmesh.engines.exposure_guard import mapping
from memmesh.engines.exposure_guard.use_cases import ExposureGuardService
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2 as pb
from memmesh.exposure_guard.v1 import exposure_guard_service_pb2_grpc as pb_grpc
from memmesh.runtime.timeconv import micros_of


class ExposureGuardServicer(pb_grpc.ExposureGuardServiceServicer):
    def __init__(self, service: ExposureGuardService) -> None:
        self._service = service

    async def Filter(
        self, request: pb.FilterRequest, context: grpc.aio.ServicerContext
    ) -> pb.FilterResponse:
        outcome = await self._service.filter(
            request.scope.tenant_id,
            request.scope.user_id,
            mapping.exposed_items(request),
            mapping.channel_of(request.channel),
            speak_text_allowed=request.speak_text_allowed,
            user_asked=request.user_asked,
        )
        return mapping.filter_response(outcome)

    async def SetRule(
        self, request: pb.SetRuleRequest, context: grpc.aio.ServicerContext
    ) -> pb.SetRuleResponse:
        rule, created = await self._service.set_rule(
            request.scope.tenant_id,
            request.scope.user_id,
            mapping.rule_id_of(request.rule),
            request.reason_code,
            micros_of(request.now),
        )
        return pb.SetRuleResponse(rule=mapping.rule_message(rule), created=created)

    async def RemoveRule(
        self, request: pb.RemoveRuleRequest, context: grpc.aio.ServicerContext
    ) -> pb.RemoveRuleResponse:
        removed = await self._service.remove_rule(
            request.scope.tenant_id,
            request.scope.user_id,
            mapping.rule_id_of(request.rule),
            request.reason_code,
            micros_of(request.now),
        )
        return pb.RemoveRuleResponse(removed=removed)

    async def ListRules(
        self, request: pb.ListRulesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListRulesResponse:
        rules = await self._service.list_rules(request.scope.tenant_id, request.scope.user_id)
        return pb.ListRulesResponse(rules=[mapping.rule_message(rule) for rule in rules])

    async def CheckStore(
        self, request: pb.CheckStoreRequest, context: grpc.aio.ServicerContext
    ) -> pb.CheckStoreResponse:
        blocking = await self._service.check_store(
            request.scope.tenant_id, request.scope.user_id, mapping.fact_of(request)
        )
        if blocking is None:
            return pb.CheckStoreResponse(allowed=True)
        return pb.CheckStoreResponse(allowed=False, blocking_rule=mapping.rule_message(blocking))

    async def RecallSummary(
        self, request: pb.RecallSummaryRequest, context: grpc.aio.ServicerContext
    ) -> pb.RecallSummaryResponse:
        summary = await self._service.recall_summary(
            request.scope.tenant_id,
            request.scope.user_id,
            mapping.summary_atoms(request),
            mapping.channel_of(request.channel),
            speak_text_allowed=request.speak_text_allowed,
        )
        return mapping.summary_response(summary)

    async def ForgetUser(
        self, request: pb.ForgetUserRequest, context: grpc.aio.ServicerContext
    ) -> pb.ForgetUserResponse:
        removed = await self._service.forget_user(
            request.scope.tenant_id, request.scope.user_id, micros_of(request.now)
        )
        return pb.ForgetUserResponse(removed_rule_count=removed)
