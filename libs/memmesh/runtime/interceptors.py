"""Server interceptors every engine runs: auth, validation, deadlines, errors, access log."""

from __future__ import annotations

import hmac
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Protocol

import grpc
from google.protobuf.empty_pb2 import Empty
from google.protobuf.message import Message

from memmesh.runtime import deadlines, telemetry
from memmesh.runtime.errors import (
    DeadlineExpired,
    DomainError,
    InvalidInput,
    PermissionDenied,
    Unauthenticated,
    to_status,
)
from memmesh.runtime.metrics import instruments, metrics_enabled
from memmesh.runtime.settings import DEVELOPMENT_INTERNAL_TOKEN
from memmesh.runtime.tls import peer_has_certificate
from memmesh.runtime.validation import ClockWindow, undecodable, validate, validate_clock

log = logging.getLogger("memmesh.access")

INTERNAL_TOKEN_HEADER = "x-internal-token"
# Health answers without a token: Kubernetes' gRPC probes cannot send metadata (nor speak
# TLS: with TLS on, they use the engine's plaintext health-only port), and SERVING or
# NOT_SERVING reveals nothing else. Under mTLS the engine port still needs a mesh
# certificate to reach it. Reflection describes every RPC, so it takes the services' rule.
OPEN_SERVICE_PREFIXES = ("/grpc.health.v1.Health/",)
# Tenant keys shipped for `make run`; MEMMESH_ENV=production refuses them.
DEVELOPMENT_TENANT_KEYS = frozenset({"demo-key"})


class Authenticator(Protocol):
    """Decides whether a caller may make this call; raises a DomainError when not."""

    def authenticate(self, method: str, metadata: Mapping[str, str], request: Message) -> None: ...


class InternalTokenAuthenticator:
    """Engine-to-engine calls carry the shared internal token."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()
        self._plain = token

    def development_secrets(self) -> list[str]:
        """What a production engine must not run with (the published development token)."""
        published = self._plain == DEVELOPMENT_INTERNAL_TOKEN
        return ["the published development internal token"] if published else []

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
        self._development = sorted(
            tenant for tenant, key in tenant_keys.items() if key in DEVELOPMENT_TENANT_KEYS
        )

    def development_secrets(self) -> list[str]:
        """What a production gateway must not run with: published tenant keys and token."""
        found = [f"the published tenant key of {tenant!r}" for tenant in self._development]
        return [*found, *self._internal.development_secrets()]

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


class UndecodableRequest:
    """What a request's deserializer hands the handler when the bytes do not decode: the
    policy answers it with INVALID_ARGUMENT naming the field (after authentication)."""

    __slots__ = ("error",)

    def __init__(self, error: InvalidInput) -> None:
        self.error = error


def tolerant_deserializer(
    deserialize: Callable[[bytes], Any] | None,
) -> Callable[[bytes], Any] | None:
    """The request deserializer, returning an UndecodableRequest instead of raising (grpc
    would answer a raising deserializer with UNKNOWN or INTERNAL)."""
    if deserialize is None:
        return None
    owner = getattr(deserialize, "__self__", None)  # FromString is bound to its message class
    descriptor = getattr(owner, "DESCRIPTOR", None)

    def tolerant(data: bytes) -> Any:
        try:
            return deserialize(data)
        except Exception:
            return UndecodableRequest(undecodable(descriptor, data))

    return tolerant


def _validate(request: Any) -> None:
    if isinstance(request, UndecodableRequest):
        raise request.error
    validate(request)


def _scope_of(request: Message) -> tuple[str, str] | None:
    if not isinstance(request, Message):
        return None
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

    def __init__(
        self,
        authenticator: Authenticator,
        *,
        require_peer_certificate: bool = False,
        clock_window: ClockWindow | None = None,
    ) -> None:
        self._authenticator = authenticator
        # How far a caller's `now` and turn times may lie from this server's clock.
        self._clock_window = clock_window or ClockWindow()
        # Under mTLS a call is admitted only from a peer whose certificate gRPC verified
        # against the mesh CA, on top of the token: a leaked token alone reaches nothing.
        self._require_peer_certificate = require_peer_certificate

    def wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        """The handler with the policy around it (standard open services go unwrapped)."""
        if handler is None or method.startswith(OPEN_SERVICE_PREFIXES):
            return handler
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(method, handler.unary_unary),
                request_deserializer=tolerant_deserializer(handler.request_deserializer),
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._wrap_stream(method, handler.unary_stream),
                request_deserializer=tolerant_deserializer(handler.request_deserializer),
                response_serializer=handler.response_serializer,
            )
        if handler.stream_stream is not None:  # reflection: same authentication as the services
            return grpc.stream_stream_rpc_method_handler(
                self._wrap_bidi(method, handler.stream_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # no client-streaming RPCs in the contracts

    def _authenticate_peer(self, context: Any) -> None:
        if self._require_peer_certificate and not peer_has_certificate(context.auth_context()):
            raise Unauthenticated("the peer presented no certificate from the mesh CA")

    def _wrap_bidi(self, method: str, behavior: Callable[..., Any]) -> Callable[..., Any]:
        async def wrapped(
            requests: AsyncIterator[Message], context: grpc.aio.ServicerContext
        ) -> AsyncIterator[Any]:
            try:
                self._authenticate_peer(context)
                self._authenticator.authenticate(method, _metadata_of(context), Empty())
            except DomainError as error:
                await _abort(context, method, error)
                return
            async for response in behavior(requests, context):
                yield response

        return wrapped

    async def _admit(self, method: str, request: Message, context: Any) -> None:
        remaining = context.time_remaining()
        if remaining is not None and remaining <= 0:
            raise DeadlineExpired("deadline expired before handling")
        deadlines.set_inbound_deadline(remaining)
        self._authenticate_peer(context)
        try:
            self._authenticator.authenticate(method, _metadata_of(context), request)
        except PermissionDenied:
            # The caller is known; a malformed tenant id is a bad field, not another tenant.
            _validate(request)
            raise
        _validate(request)
        validate_clock(request, self._clock_window, time.time())
        scope = _scope_of(request)
        if scope is not None:
            telemetry.annotate_scope(*scope)

    def _wrap_unary(self, method: str, behavior: Callable[..., Any]) -> Callable[..., Any]:
        async def wrapped(request: Message, context: grpc.aio.ServicerContext) -> Any:
            started, code, admitted = time.perf_counter(), "OK", False
            try:
                await self._admit(method, request, context)
                admitted = True
                return await behavior(request, context)
            except grpc.aio.AbortError:
                code = "ABORTED"
                raise
            except Exception as error:
                code = _code_of(error)
                await _abort(context, method, error)
            finally:
                _access_log(method, code, started, request if admitted else None)

        return wrapped

    def _wrap_stream(self, method: str, behavior: Callable[..., Any]) -> Callable[..., Any]:
        async def wrapped(
            request: Message, context: grpc.aio.ServicerContext
        ) -> AsyncIterator[Any]:
            started, code, admitted = time.perf_counter(), "OK", False
            try:
                await self._admit(method, request, context)
                admitted = True
                async for response in behavior(request, context):
                    yield response
            except grpc.aio.AbortError:
                code = "ABORTED"
                raise
            except Exception as error:
                code = _code_of(error)
                await _abort(context, method, error)
            finally:
                _access_log(method, code, started, request if admitted else None)

        return wrapped


class PolicyInterceptor(grpc.aio.ServerInterceptor):
    """The ServerPolicy as an interceptor, for servers whose handlers were registered unwrapped."""

    def __init__(
        self, authenticator: Authenticator, *, require_peer_certificate: bool = False
    ) -> None:
        self._policy = ServerPolicy(
            authenticator, require_peer_certificate=require_peer_certificate
        )

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


# Identifiers in a log line: printable, bounded, never able to start a line of their own.
LOGGED_ID_MAX = 64
_UNPRINTABLE = re.compile(r"[^\x21-\x7e]")


def loggable_id(value: str) -> str:
    """An identifier as it may appear in a log line: characters other than printable ASCII
    escaped (a newline cannot forge a line), at most LOGGED_ID_MAX characters."""
    head = value[: LOGGED_ID_MAX + 1]  # never escape (or hold) more than is written
    escaped = _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode(), head)
    if len(escaped) > LOGGED_ID_MAX:
        return f"{escaped[:LOGGED_ID_MAX]}...({len(value)} chars)"
    return escaped or "-"


def _access_log(method: str, code: str, started: float, request: Message | None) -> None:
    """One line per call, and its time in the RPC duration metric. Identifiers only of a
    request that was authenticated and validated; otherwise the line says "-" and nothing
    the caller sent is written."""
    elapsed_ms = (time.perf_counter() - started) * 1000
    if metrics_enabled():
        instruments().rpc_duration.record(elapsed_ms, {"rpc.method": method, "rpc.status": code})
    if not log.isEnabledFor(logging.INFO):
        return
    scope = _scope_of(request) if request is not None else None
    user = telemetry.user_pseudonym(*scope) if scope else "-"
    log.info(
        "rpc method=%s code=%s ms=%.2f trace_id=%s tenant=%s user=%s",
        method,
        code,
        elapsed_ms,
        telemetry.current_trace_id(),
        loggable_id(scope[0]) if scope else "-",
        user,
    )
