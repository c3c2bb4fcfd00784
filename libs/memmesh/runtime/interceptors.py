"""Server interceptors every engine runs: auth, validation, deadlines, errors, access log."""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Protocol

import grpc
from google.protobuf.message import Message

from memmesh.runtime import deadlines, telemetry
from memmesh.runtime.errors import (
    DeadlineExpired,
    DomainError,
    PermissionDenied,
    Unauthenticated,
    to_status,
)
from memmesh.runtime.validation import validate

log = logging.getLogger("memmesh.access")

INTERNAL_TOKEN_HEADER = "x-internal-token"
# Standard services that answer without a token: orchestrators probe health, tools reflect.
OPEN_SERVICE_PREFIXES = ("/grpc.health.v1.Health/", "/grpc.reflection.")


class Authenticator(Protocol):
    """Decides whether a caller may make this call; raises a DomainError when not."""

    def authenticate(self, method: str, metadata: Mapping[str, str], request: Message) -> None: ...


class InternalTokenAuthenticator:
    """Engine-to-engine calls carry the shared internal token."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    def authenticate(self, method: str, metadata: Mapping[str, str], request: Message) -> None:
        given = metadata.get(INTERNAL_TOKEN_HEADER, "").encode()
        if not hmac.compare_digest(given, self._token):
            raise Unauthenticated("missing or wrong internal token")


class TenantKeyAuthenticator:
    """Gateway callers present a per-tenant key; a key used for another tenant is refused."""

    def __init__(
        self, tenant_keys: Mapping[str, str], internal_token: str, internal_methods: set[str]
    ) -> None:
        self._tenant_by_key = {key.encode(): tenant for tenant, key in tenant_keys.items()}
        self._internal = InternalTokenAuthenticator(internal_token)
        self._internal_methods = internal_methods

    def authenticate(self, method: str, metadata: Mapping[str, str], request: Message) -> None:
        if method in self._internal_methods:
            self._internal.authenticate(method, metadata, request)
        header = metadata.get("authorization", "")
        key = header.removeprefix("Bearer ").strip().encode()
        tenant = next(
            (t for k, t in self._tenant_by_key.items() if hmac.compare_digest(k, key)), None
        )
        if not key or tenant is None:
            raise Unauthenticated("missing or unknown tenant key")
        scope = getattr(request, "scope", None)
        requested = scope.tenant_id if scope is not None else ""
        if requested and requested != tenant:
            raise PermissionDenied("the tenant key does not belong to this tenant")


def _scope_of(request: Message) -> tuple[str, str] | None:
    if "scope" not in request.DESCRIPTOR.fields_by_name or not request.HasField("scope"):
        return None
    scope = request.scope  # type: ignore[attr-defined]
    return scope.tenant_id, scope.user_id


def _metadata_of(context: grpc.aio.ServicerContext) -> dict[str, str]:
    return {k: v for k, v in (context.invocation_metadata() or ()) if isinstance(v, str)}


class ServerPolicy:
    """The shared policy around every handler: the one place errors become statuses.

    `wrap` applies it to a method handler once, when the server registers it, so a call
    pays for the policy itself and not for an interceptor lookup on every call.
    """

    def __init__(self, authenticator: Authenticator) -> None:
        self._authenticator = authenticator

    def wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        """The handler with the policy around it (standard open services go unwrapped)."""
        if handler is None or method.startswith(OPEN_SERVICE_PREFIXES):
            return handler
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(method, handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._wrap_stream(method, handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # no client-streaming RPCs in the contracts

    async def _admit(self, method: str, request: Message, context: Any) -> None:
        remaining = context.time_remaining()
        if remaining is not None and remaining <= 0:
            raise DeadlineExpired("deadline expired before handling")
        deadlines.set_inbound_deadline(remaining)
        self._authenticator.authenticate(method, _metadata_of(context), request)
        validate(request)
        scope = _scope_of(request)
        if scope is not None:
            telemetry.annotate_scope(*scope)

    def _wrap_unary(self, method: str, behavior: Callable[..., Any]) -> Callable[..., Any]:
        async def wrapped(request: Message, context: grpc.aio.ServicerContext) -> Any:
            started, code = time.perf_counter(), "OK"
            try:
                await self._admit(method, request, context)
                return await behavior(request, context)
            except grpc.aio.AbortError:
                code = "ABORTED"
                raise
            except Exception as error:
                code = _code_of(error)
                await _abort(context, method, error)
            finally:
                _access_log(method, code, started, request)

        return wrapped

    def _wrap_stream(self, method: str, behavior: Callable[..., Any]) -> Callable[..., Any]:
        async def wrapped(
            request: Message, context: grpc.aio.ServicerContext
        ) -> AsyncIterator[Any]:
            started, code = time.perf_counter(), "OK"
            try:
                await self._admit(method, request, context)
                async for response in behavior(request, context):
                    yield response
            except grpc.aio.AbortError:
                code = "ABORTED"
                raise
            except Exception as error:
                code = _code_of(error)
                await _abort(context, method, error)
            finally:
                _access_log(method, code, started, request)

        return wrapped


class PolicyInterceptor(grpc.aio.ServerInterceptor):
    """The ServerPolicy as an interceptor, for servers whose handlers were registered unwrapped."""

    def __init__(self, authenticator: Authenticator) -> None:
        self._policy = ServerPolicy(authenticator)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        return self._policy.wrap(handler_call_details.method, handler)


def _code_of(error: Exception) -> str:
    return error.status_name if isinstance(error, DomainError) else "INTERNAL"


async def _abort(context: grpc.aio.ServicerContext, method: str, error: Exception) -> None:
    """End the call with the error's status; unexpected errors are logged and never leak."""
    if not isinstance(error, DomainError):
        log.error("unhandled error in %s", method, exc_info=error)
        error = DomainError("internal error")
    try:
        await context.abort_with_status(to_status(error))
    except grpc.aio.AbortError:
        raise
    except Exception:
        # The call has already ended (the caller cancelled or its deadline passed): nothing to send.
        log.debug("could not send the status of %s: the call had ended", method)


def _access_log(method: str, code: str, started: float, request: Message) -> None:
    if not log.isEnabledFor(logging.INFO):
        return
    scope = _scope_of(request)
    user = telemetry.user_pseudonym(*scope) if scope else "-"
    log.info(
        "rpc method=%s code=%s ms=%.2f trace_id=%s tenant=%s user=%s",
        method,
        code,
        (time.perf_counter() - started) * 1000,
        telemetry.current_trace_id(),
        scope[0] if scope else "-",
        user,
    )
