"""Client channels between engines: token, inherited deadline, retries of UNAVAILABLE only,
and TLS with this process's mesh certificate when MEMMESH_TLS_DIR (or the files) is set."""

from __future__ import annotations

import json
from typing import Any

import grpc
from opentelemetry.instrumentation.grpc import aio_client_interceptors

from memmesh.runtime import deadlines, tls
from memmesh.runtime.interceptors import INTERNAL_TOKEN_HEADER
from memmesh.runtime.settings import MeshSettings
from memmesh.runtime.telemetry import tracing_enabled

# Only UNAVAILABLE is retried: it means the request never reached a handler, so a retry
# cannot apply a write twice (writes carry idempotency keys regardless).
_SERVICE_CONFIG = json.dumps(
    {
        "methodConfig": [
            {
                "name": [{}],
                "retryPolicy": {
                    "maxAttempts": 3,
                    "initialBackoff": "0.01s",
                    "maxBackoff": "0.1s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ]
    }
)

CHANNEL_OPTIONS = [
    ("grpc.service_config", _SERVICE_CONFIG),
    ("grpc.enable_retries", 1),
    # Engines talk constantly; keepalive finds a dead peer before a turn waits on it.
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 5_000),
    # Bundles are capped at 32 KB; 4 MB leaves room for batch index updates.
    ("grpc.max_receive_message_length", 4 * 1024 * 1024),
    # A restarted engine is back within a turn's budget: reconnect fast, back off to 2 s at most.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
]


class _CallPolicy:
    """Adds the internal token and a deadline derived from the caller's remaining time."""

    def __init__(self, token: str, default_timeout_s: float) -> None:
        self._token = token
        self._default_timeout_s = default_timeout_s

    def timeout(self, requested: float | None) -> float:
        """The caller's timeout, never beyond the inbound call's time left (or the default)."""
        inherited = deadlines.outbound_timeout(self._default_timeout_s)
        return inherited if requested is None else min(requested, inherited)

    def metadata(self, given: Any) -> tuple[tuple[str, str], ...]:
        """The caller's metadata and the internal token."""
        return (*(given or ()), (INTERNAL_TOKEN_HEADER, self._token))

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        return grpc.aio.ClientCallDetails(
            method=details.method,
            timeout=self.timeout(details.timeout),
            metadata=grpc.aio.Metadata(*self.metadata(details.metadata)),
            credentials=details.credentials,
            wait_for_ready=details.wait_for_ready,
        )


# grpc.aio files an interceptor under the first call kind it implements only,
# so each kind gets its own class.
class _UnaryPolicy(_CallPolicy, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(
        self, continuation: Any, client_call_details: Any, request: Any
    ) -> Any:
        return await continuation(self._details(client_call_details), request)


class _StreamPolicy(_CallPolicy, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(
        self, continuation: Any, client_call_details: Any, request: Any
    ) -> Any:
        return await continuation(self._details(client_call_details), request)


class _PolicyCall:
    """A multi-callable that adds the token and the inherited deadline to each call."""

    def __init__(self, inner: Any, policy: _CallPolicy) -> None:
        self._inner = inner
        self._policy = policy

    def __call__(
        self, request: Any, *, timeout: float | None = None, metadata: Any = None, **options: Any
    ) -> Any:
        policy = self._policy
        return self._inner(
            request, timeout=policy.timeout(timeout), metadata=policy.metadata(metadata), **options
        )


class PolicyChannel(grpc.aio.Channel):
    """The channel with the call policy applied by its multi-callables, without grpc.aio's
    client interceptor machinery (an extra task and call object per call, on every hop)."""

    def __init__(self, channel: grpc.aio.Channel, policy: _CallPolicy) -> None:
        self._channel = channel
        self._policy = policy

    async def __aenter__(self) -> PolicyChannel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._channel.close(None)

    async def close(self, grace: float | None = None) -> None:
        await self._channel.close(grace)

    def get_state(self, try_to_connect: bool = False) -> grpc.ChannelConnectivity:
        return self._channel.get_state(try_to_connect)

    async def wait_for_state_change(self, last_observed_state: grpc.ChannelConnectivity) -> None:
        await self._channel.wait_for_state_change(last_observed_state)

    async def channel_ready(self) -> None:
        await self._channel.channel_ready()

    def unary_unary(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _PolicyCall(self._channel.unary_unary(method, *args, **kwargs), self._policy)

    def unary_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _PolicyCall(self._channel.unary_stream(method, *args, **kwargs), self._policy)

    def stream_unary(self, method: str, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("no client-streaming RPCs in the contracts")

    def stream_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("no bidirectional RPCs in the contracts")


# The certificate this process presents on engine channels: its engine name once
# run_engine has started (None: MEMMESH_TLS_IDENTITY, for tools and benchmarks).
_identity: str | None = None


def use_identity(name: str) -> None:
    """Present `name`'s certificate (from the TLS directory) on every later engine channel."""
    global _identity
    _identity = name


def mesh_credentials(settings: MeshSettings | None = None) -> grpc.ChannelCredentials | None:
    """This process's mTLS credentials for engine channels (None: plaintext, no TLS set)."""
    settings = settings or MeshSettings()
    if not settings.tls_enabled:
        return None
    return tls.channel_credentials(settings.tls_files(_identity or settings.tls_identity))


# Engines are reached by Service name, pod address or loopback: each one's certificate
# names the mesh, and that name is what a channel checks (the CA does the rest).
_TLS_OPTIONS = [("grpc.ssl_target_name_override", tls.MESH_SERVER_NAME)]


def _channel(
    target: str, credentials: grpc.ChannelCredentials | None, **kwargs: Any
) -> grpc.aio.Channel:
    if credentials is None:
        return grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS, **kwargs)
    return grpc.aio.secure_channel(
        target, credentials, options=[*CHANNEL_OPTIONS, *_TLS_OPTIONS], **kwargs
    )


def engine_channel(
    target: str,
    token: str,
    default_timeout_s: float = 2.0,
    credentials: grpc.ChannelCredentials | None = None,
) -> grpc.aio.Channel:
    """A channel to another engine; every call on it carries the token and a deadline.

    Over mTLS when TLS is configured (or `credentials` are given), plaintext otherwise."""
    credentials = credentials or mesh_credentials()
    if not tracing_enabled():
        channel = _channel(target, credentials)
        return PolicyChannel(channel, _CallPolicy(token, default_timeout_s))
    # With tracing, the span interceptors run first and the policy runs as interceptors too.
    interceptors = [
        *aio_client_interceptors(),
        _UnaryPolicy(token, default_timeout_s),
        _StreamPolicy(token, default_timeout_s),
    ]
    return _channel(target, credentials, interceptors=interceptors)
