"""Client channels between engines: token, inherited deadline, retries of UNAVAILABLE only."""

from __future__ import annotations

import json
from typing import Any

import grpc
from opentelemetry.instrumentation.grpc import aio_client_interceptors

from memmesh.runtime import deadlines
from memmesh.runtime.interceptors import INTERNAL_TOKEN_HEADER
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

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        metadata = grpc.aio.Metadata(*(details.metadata or ()))
        metadata.add(INTERNAL_TOKEN_HEADER, self._token)
        inherited = deadlines.outbound_timeout(self._default_timeout_s)
        timeout = inherited if details.timeout is None else min(details.timeout, inherited)
        return grpc.aio.ClientCallDetails(
            method=details.method,
            timeout=timeout,
            metadata=metadata,
            credentials=details.credentials,
            wait_for_ready=details.wait_for_ready,
        )


# grpc.aio files an interceptor under the first call kind it implements only,
# so each kind gets its own class.
class _UnaryPolicy(_CallPolicy, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return await continuation(self._details(client_call_details), request)


class _StreamPolicy(_CallPolicy, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return await continuation(self._details(client_call_details), request)


def engine_channel(target: str, token: str, default_timeout_s: float = 2.0) -> grpc.aio.Channel:
    """A channel to another engine; every call on it carries the token and a deadline."""
    interceptors = [
        *(aio_client_interceptors() if tracing_enabled() else []),
        _UnaryPolicy(token, default_timeout_s),
        _StreamPolicy(token, default_timeout_s),
    ]
    return grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS, interceptors=interceptors)
