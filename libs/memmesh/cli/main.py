"""The `memmesh` command: run the mesh, check its health, and the user-facing tools."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memmesh.runtime.settings import ENGINE_NAMES, MeshSettings

if TYPE_CHECKING:
    from memmesh.client.gateway import GatewayClient
from memmesh.runtime.supervisor import (
    STATE_FILE,
    Mesh,
    Supervisor,
    built_engines,
    read_supervisor_state,
)


def _default_ports(settings: MeshSettings) -> dict[str, int]:
    return {name: int(settings.addr_of(name).rsplit(":", 1)[1]) for name in ENGINE_NAMES}


def cmd_run(args: argparse.Namespace) -> int:
    """Start every built engine on its configured port and keep them up until Ctrl-C."""
    from memmesh.runtime.engine import EXIT_REFUSED, production_problems

    settings = MeshSettings()
    refused = production_problems(settings)
    if refused:
        print(
            "memmesh run: refusing to start with MEMMESH_ENV=production: " + "; ".join(refused),
            file=sys.stderr,
        )
        return EXIT_REFUSED
    log_format = "%(asctime)s memmesh-run %(levelname)s %(message)s"
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=log_format)
    from memmesh.runtime.metrics import setup_metrics

    # The supervisor's own metrics (engine restarts); each engine exports its own.
    meters = setup_metrics("supervisor", settings.otlp_target, settings.otlp_metric_interval_ms)
    engines = built_engines()
    mesh = Mesh(engines, ports=_default_ports(settings), host=settings.host)
    supervisor = Supervisor(lambda name: mesh.spawn(name).process, settings.data_dir / STATE_FILE)
    stop = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        mesh.start()
        for name, engine in mesh.running.items():
            supervisor.adopt(name, engine.addr, engine.process)
        print(f"memmesh is running ({settings.storage_url} storage under {settings.data_dir}):")
        for name in engines:
            print(f"  {name:<18} {mesh.addrs[name]}")
        print("Ctrl-C stops every engine; one that dies is restarted.", flush=True)
        supervisor.run(lambda: stop)
    finally:
        mesh.stop()
        supervisor.close()
        if meters is not None:
            meters.shutdown()
        print("stopped.")
    return 0


def _probe_channel(addr: str, settings: MeshSettings) -> grpc.aio.Channel:
    """Plaintext, or mTLS with the tool certificate when the mesh runs TLS."""
    from memmesh.runtime.channels import mesh_credentials
    from memmesh.runtime.tls import MESH_SERVER_NAME

    credentials = mesh_credentials(settings)
    if credentials is None:
        return grpc.aio.insecure_channel(addr)
    # The gateway shows its public certificate (its SANs), the engines the mesh name.
    options = (
        []
        if addr == settings.addr_of("gateway")
        else [("grpc.ssl_target_name_override", MESH_SERVER_NAME)]
    )
    return grpc.aio.secure_channel(addr, credentials, options=options)


async def _health(addr: str, timeout_s: float, settings: MeshSettings) -> str:
    async with _probe_channel(addr, settings) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=timeout_s)
        except grpc.aio.AioRpcError as error:
            return f"DOWN ({error.code().name})"
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def cmd_status(args: argparse.Namespace) -> int:
    """Print the health of every engine at its configured address and, under `memmesh run`, its restarts."""
    settings = MeshSettings()
    names = built_engines()
    supervised = read_supervisor_state(settings.data_dir / STATE_FILE)

    async def check_all() -> list[str]:
        return await asyncio.gather(
            *(_health(settings.addr_of(n), args.timeout, settings) for n in names)
        )

    results = asyncio.run(check_all())
    for name, status in zip(names, results, strict=True):
        print(
            f"{name:<18} {settings.addr_of(name):<22} {_restarts(supervised.get(name)):<26} {status}"
        )
    return 0 if all(status == "SERVING" for status in results) else 1


def _restarts(engine: dict[str, object] | None) -> str:
    """`restarts=1 (last exit -9)`, or `restarts=-` when no `memmesh run` supervises the engine."""
    if engine is None:
        return "restarts=-"
    last_exit = engine.get("last_exit")
    return f"restarts={engine.get('restarts', 0)}" + (
        "" if last_exit is None else f" (last exit {last_exit})"
    )


def cmd_certs(args: argparse.Namespace) -> int:
    """Write a development CA and every engine's, the gateway's and a tool's certificates."""
    from memmesh.runtime.tls import make_certificates

    directory = Path(args.dir)
    written = make_certificates(
        directory, ENGINE_NAMES, gateway_hosts=args.gateway_host, reuse_ca=not args.new_ca
    )
    for path in written:
        print(path)
    print(
        f"export MEMMESH_TLS_DIR={directory.resolve()}  # engines serve mTLS, the gateway TLS",
        flush=True,
    )
    return 0


def cmd_extract(args: argparse.Namespace) -> int:
    """Run the embedded extractor over standard input, one utterance per line."""
    from memmesh.extraction.cli import cli_extract

    return cli_extract(sys.stdin, sys.stdout, rules_only=args.rules)


def _gateway_client(args: argparse.Namespace) -> GatewayClient:
    from memmesh.client.gateway import GatewayClient

    settings = MeshSettings()
    ca = args.ca or (settings.tls_files("client").ca if settings.tls_enabled else None)
    credentials = grpc.ssl_channel_credentials(Path(ca).read_bytes()) if ca else None
    return GatewayClient(
        args.gateway or settings.addr_of("gateway"),
        args.key,
        tenant_id=args.tenant,
        credentials=credentials,
    )


def cmd_chat(args: argparse.Namespace) -> int:
    """Chat with the running mesh as one user."""
    from memmesh.cli.conversation import chat

    async def run() -> int:
        async with _gateway_client(args) as client:
            return await chat(client, args.user, args.session, args.channel)

    return asyncio.run(run())


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay a conversation file through the gateway and print the per-turn bundles."""
    from memmesh.cli.conversation import replay

    async def run() -> int:
        async with _gateway_client(args) as client:
            with open(args.file, encoding="utf-8") as source:
                return await replay(client, source, sys.stdout, args.json, args.channel)

    return asyncio.run(run())


def _gateway_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--tenant", default=os.environ.get("MEMMESH_TENANT", "demo"))
    command.add_argument("--key", default=os.environ.get("MEMMESH_TENANT_KEY", "demo-key"))
    command.add_argument(
        "--gateway", default=None, help="host:port (default: MEMMESH_GATEWAY_ADDR)"
    )
    command.add_argument("--channel", choices=["voice", "text"], default="voice")
    command.add_argument(
        "--ca",
        default=None,
        help="CA file for TLS to the gateway (default: ca.pem of MEMMESH_TLS_DIR, if set)",
    )


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="memmesh", description="memmesh: memory for voice assistants"
    )
    commands = root.add_subparsers(dest="command", required=True)
    commands.add_parser("run", help="start every built engine").set_defaults(func=cmd_run)
    status = commands.add_parser("status", help="print each engine's health")
    status.add_argument("--timeout", type=float, default=1.0)
    status.set_defaults(func=cmd_status)
    certs = commands.add_parser(
        "certs", help="make a development CA and the mesh's certificates in DIR"
    )
    certs.add_argument("dir")
    certs.add_argument(
        "--gateway-host",
        action="append",
        default=[],
        help="a DNS name or IP clients use for the gateway (repeatable)",
    )
    certs.add_argument(
        "--new-ca", action="store_true", help="replace the CA in DIR instead of reusing it"
    )
    certs.set_defaults(func=cmd_certs)
    extract = commands.add_parser("extract", help="extract facts from utterances on stdin")
    extract.add_argument(
        "--rules", action="store_true", help="the rules alone, without the learned clause head"
    )
    extract.set_defaults(func=cmd_extract)
    chat = commands.add_parser("chat", help="talk as a user and see each turn's bundle")
    _gateway_options(chat)
    chat.add_argument("--user", default="me")
    chat.add_argument("--session", default=f"chat-{os.getpid()}")
    chat.set_defaults(func=cmd_chat)
    replay = commands.add_parser("replay", help="replay a JSON Lines conversation file")
    _gateway_options(replay)
    replay.add_argument("file")
    replay.add_argument("--json", action="store_true", help="one JSON object per user turn")
    replay.set_defaults(func=cmd_replay)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
