#!/usr/bin/env python
"""HEALTHCHECK of an engine container: exit 0 when grpc.health.v1 on the engine's plaintext
health port (MEMMESH_HEALTH_PORT, bound on MEMMESH_HOST) answers SERVING, 1 otherwise."""

from __future__ import annotations

import os
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

TIMEOUT_S = 3.0


def target(environ: dict[str, str]) -> str:
    """host:port of the health server; a wildcard bind is reached on loopback."""
    host = environ.get("MEMMESH_HOST", "127.0.0.1")
    if host in ("", "0.0.0.0", "::", "[::]"):
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{environ['MEMMESH_HEALTH_PORT']}"


def main() -> int:
    environ = dict(os.environ)
    if environ.get("MEMMESH_HEALTH_PORT", "0") in ("", "0"):
        print(
            "MEMMESH_HEALTH_PORT is not set: the engine serves no plaintext health", file=sys.stderr
        )
        return 1
    with grpc.insecure_channel(target(environ)) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT_S
            )
        except grpc.RpcError as error:
            print(f"health check failed: {error.code().name}", file=sys.stderr)
            return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(status)
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1


if __name__ == "__main__":
    sys.exit(main())
