"""Bad input at the gateway's edge, against a real mesh (every per-turn engine in this process,
on loopback): a fuzz over every gateway RPC built from the proto descriptors never gets
INTERNAL, UNKNOWN or UNAVAILABLE (nor a Brief failed closed as if an engine were down);
undecodable bytes get INVALID_ARGUMENT naming the field; the access log never holds an
identifier the caller sent before it was authenticated and validated, and never a forged
line or a megabyte id."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memmesh.common.v1 import memory_pb2, scope_pb2
from memmesh.gateway.v1 import gateway_service_pb2 as pb
from memmesh.runtime.errors import details_of
from memmesh.runtime.validation import MAX_TIMESTAMP_SECONDS, MIN_TIMESTAMP_SECONDS, rules_of
from memmesh.testing.in_process import InProcessMesh, start_in_process

ENGINES = [
    "ledger",
    "current_state",
    "exposure_guard",
    "retrieval_ranker",
    "thread_store",
    "atom_extractor",
    "context_composer",
    "gateway",
]
TENANT, TENANT_KEY = "edge", "edge-key"
SERVICE = pb.DESCRIPTOR.services_by_name["GatewayService"]
# Codes that would say "the mesh broke" or "try again" about a request that was only bad.
BROKEN = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN, grpc.StatusCode.UNAVAILABLE}
EXAMPLES_PER_RPC = 25
# Status names of every fuzzed call, by method: the fuzz must also reach the handlers.
ANSWERED: dict[str, list[str]] = {}


class ThreadedMesh:
    """The in-process mesh on its own event loop thread, so tests (and hypothesis) call it
    with plain blocking gRPC."""

    def __init__(self, data_dir: Path) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.mesh: InProcessMesh = self._run(
            start_in_process(ENGINES, data_dir, default_call_timeout_s=5.0)
        )

    def _run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(60)

    @property
    def gateway_addr(self) -> str:
        return self.mesh.settings.addr_of("gateway")

    def stop(self) -> None:
        self._run(self.mesh.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadedMesh]:
    env = {
        "MEMMESH_GATEWAY_TENANT_KEYS": f'{{"{TENANT}": "{TENANT_KEY}"}}',
        "MEMMESH_GATEWAY_BRIEF_BUDGET_MS": "3000",
    }
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        running = ThreadedMesh(tmp_path_factory.mktemp("edge-fuzz"))
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    yield running
    running.stop()


@pytest.fixture(scope="module")
def channel(mesh: ThreadedMesh) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(mesh.gateway_addr) as opened:
        yield opened


def metadata(mesh: ThreadedMesh) -> list[tuple[str, str]]:
    return [
        ("authorization", f"Bearer {TENANT_KEY}"),
        ("x-internal-token", mesh.mesh.settings.internal_token),
    ]


def raw_call(channel: grpc.Channel, method: str, output: type[Message]) -> Callable[..., Any]:
    """A call that sends the given bytes as they are."""
    return channel.unary_unary(
        f"/{SERVICE.full_name}/{method}",
        request_serializer=lambda data: data,
        response_deserializer=output.FromString,
    )


def call(mesh: ThreadedMesh, channel: grpc.Channel, method: str, request: bytes) -> Any:
    output = pb.DESCRIPTOR.message_types_by_name[
        SERVICE.methods_by_name[method].output_type.name
    ]._concrete_class
    return raw_call(channel, method, output)(request, metadata=metadata(mesh), timeout=10)


# --- requests from the descriptors ------------------------------------------------------


def _wall_seconds() -> int:
    return int(time.time())


def timestamps() -> st.SearchStrategy[dict[str, int]]:
    """Times a client may send: now-ish, long ago, far ahead, and out of Timestamp's range."""
    seconds = st.one_of(
        st.integers(-600, 600).map(lambda offset: _wall_seconds() + offset),
        st.integers(MIN_TIMESTAMP_SECONDS, MAX_TIMESTAMP_SECONDS),
        st.sampled_from(
            [0, 2**62, -(2**63), 2**63 - 1, MIN_TIMESTAMP_SECONDS - 1, MAX_TIMESTAMP_SECONDS + 1]
        ),
        st.integers(-(2**63), 2**63 - 1),
    )
    nanos = st.one_of(st.just(0), st.integers(0, 999_999_999), st.integers(-(2**31), 2**31 - 1))
    return st.fixed_dictionaries({"seconds": seconds, "nanos": nanos})


HOSTILE_TEXT = st.sampled_from(
    ["", "\x00", "a\x00b", "line\nforged", "\r\n", "\u2028", "\x1b[31m", "é" * 40, "x" * 5000]
)


def strings(field: FieldDescriptor) -> st.SearchStrategy[str]:
    example = rules_of(field).example or "example"
    return st.one_of(st.just(example), HOSTILE_TEXT, st.text(max_size=60))


_INT_RANGES = {
    FieldDescriptor.CPPTYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.CPPTYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.CPPTYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.CPPTYPE_UINT64: (0, 2**64 - 1),
}


def scalars(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    if field.type == FieldDescriptor.TYPE_STRING:
        return strings(field)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=40)
    if field.type == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if field.type == FieldDescriptor.TYPE_ENUM:
        known = [value.number for value in field.enum_type.values]
        return st.one_of(st.sampled_from(known), st.integers(-3, 64))
    if field.cpp_type in (FieldDescriptor.CPPTYPE_FLOAT, FieldDescriptor.CPPTYPE_DOUBLE):
        return st.floats(allow_nan=True, width=32)
    low, high = _INT_RANGES[field.cpp_type]
    return st.one_of(
        st.integers(-2, 100).filter(lambda n: low <= n <= high), st.integers(low, high)
    )


def scopes() -> st.SearchStrategy[dict[str, str]]:
    """This tenant's users, or hostile ids."""
    users = st.one_of(
        st.just("fuzz-user"), st.text(alphabet="abcdefghij0123456789-", min_size=1, max_size=12)
    )
    tenants = st.one_of(st.just(TENANT), HOSTILE_TEXT, st.text(max_size=20))
    return st.fixed_dictionaries({"tenant_id": tenants, "user_id": st.one_of(users, HOSTILE_TEXT)})


def valid_value(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    """A value the field's rules accept (a now-ish time for a Timestamp)."""
    rules = rules_of(field)
    if field.message_type is not None:
        return valid_messages(field.message_type)
    if field.type == FieldDescriptor.TYPE_ENUM:
        if rules.example:
            return st.just(field.enum_type.values_by_name[rules.example].number)
        return st.sampled_from([v.number for v in field.enum_type.values if v.number != 0])
    if field.type == FieldDescriptor.TYPE_STRING:
        return st.just(rules.example or "example")
    if field.type == FieldDescriptor.TYPE_BYTES:
        return st.just(b"example")
    if field.type == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    low = rules.min if rules.HasField("min") else 1
    return st.just(int(rules.example) if rules.example else max(low, 1))


def valid_messages(descriptor: Descriptor) -> st.SearchStrategy[dict[str, Any]]:
    if descriptor.full_name == "google.protobuf.Timestamp":
        return st.integers(-600, 600).map(lambda offset: {"seconds": _wall_seconds() + offset})
    if descriptor.full_name == scope_pb2.UserScope.DESCRIPTOR.full_name:
        return st.just({"tenant_id": TENANT, "user_id": "fuzz-user"})
    required = {f.name: valid_value(f) for f in descriptor.fields if rules_of(f).required}
    return st.fixed_dictionaries(
        {name: st.lists(v, min_size=1, max_size=1) if descriptor.fields_by_name[name].is_repeated else v
         for name, v in required.items()}
    )  # fmt: skip


def fuzzed_value(field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
    """Mostly a value the rules accept, sometimes anything the wire type can carry."""
    if field.message_type is not None:
        wild: st.SearchStrategy[Any] = messages(field.message_type, depth + 1)
    else:
        wild = scalars(field)
    return st.one_of(valid_value(field), valid_value(field), valid_value(field), wild)


def messages(descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """A request as a dict of field values from the descriptor: required fields present and
    mostly valid, the others optional, any of them sometimes hostile."""
    if descriptor.full_name == "google.protobuf.Timestamp":
        return timestamps()
    if descriptor.full_name == scope_pb2.UserScope.DESCRIPTOR.full_name:
        return scopes()
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for field in descriptor.fields:
        if field.message_type is not None and (
            depth > 3 or field.message_type.GetOptions().map_entry
        ):
            continue
        value = fuzzed_value(field, depth)
        if field.is_repeated:
            value = st.lists(value, max_size=3)
        (required if rules_of(field).required else optional)[field.name] = value
    return st.fixed_dictionaries(required, optional=optional)


def build(descriptor: Descriptor, values: dict[str, Any]) -> Message:
    message = descriptor._concrete_class()
    _assign(message, values)
    return message


def _assign(message: Message, values: dict[str, Any]) -> None:
    for name, value in values.items():
        field = message.DESCRIPTOR.fields_by_name[name]
        if field.message_type is not None:
            if field.is_repeated:
                for item in value:
                    _assign(getattr(message, name).add(), item)
            else:
                target = getattr(message, name)
                target.SetInParent()
                _assign(target, value)
        elif field.is_repeated:
            getattr(message, name).extend(value)
        else:
            setattr(message, name, value)


def mutations(data: bytes) -> st.SearchStrategy[bytes]:
    """The bytes of a request, corrupted: cut short, a byte replaced, or garbage appended."""
    if not data:
        return st.binary(min_size=1, max_size=40)
    return st.one_of(
        st.integers(0, len(data) - 1).map(lambda cut: data[:cut]),
        st.tuples(st.integers(0, len(data) - 1), st.integers(0, 255)).map(
            lambda change: data[: change[0]] + bytes([change[1]]) + data[change[0] + 1 :]
        ),
        st.binary(min_size=1, max_size=20).map(lambda tail: data + tail),
        st.binary(max_size=60),
    )


def check_answer(method: str, outcome: Any) -> None:
    ANSWERED.setdefault(method, []).append(
        outcome.code().name if isinstance(outcome, grpc.RpcError) else "OK"
    )
    if isinstance(outcome, grpc.RpcError):
        assert outcome.code() not in BROKEN, (method, outcome.code(), outcome.details())
        if outcome.code() == grpc.StatusCode.INVALID_ARGUMENT:
            _, fields = details_of(outcome)  # type: ignore[arg-type]
            assert fields, (method, outcome.details())
        return
    if method == "Brief":
        # A Brief fails closed when an engine is down; input must never look like that.
        assert not outcome.reason_code.startswith("TIER1_UNAVAILABLE"), outcome.reason_code


def attempt(mesh: ThreadedMesh, channel: grpc.Channel, method: str, data: bytes) -> Any:
    try:
        return call(mesh, channel, method, data)
    except grpc.RpcError as error:
        return error


@pytest.mark.parametrize("method", [m.name for m in SERVICE.methods])
def test_fuzzed_requests_never_break_the_mesh(
    mesh: ThreadedMesh, channel: grpc.Channel, method: str
) -> None:
    descriptor = SERVICE.methods_by_name[method].input_type

    @settings(
        max_examples=EXAMPLES_PER_RPC,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(values=messages(descriptor), data=st.data())
    def run(values: dict[str, Any], data: st.DataObject) -> None:
        request = build(descriptor, values).SerializeToString()
        check_answer(method, attempt(mesh, channel, method, request))
        corrupted = data.draw(mutations(request), label="corrupted")
        check_answer(method, attempt(mesh, channel, method, corrupted))

    run()
    answered = ANSWERED[method]
    # Not every example was refused at the door: some reached the handler and the engines.
    assert "OK" in answered, answered
    assert "INVALID_ARGUMENT" in answered, answered


def test_the_fuzz_covers_every_gateway_rpc() -> None:
    assert {m.name for m in SERVICE.methods} == {
        "Brief",
        "Ingest",
        "Command",
        "OpenSession",
        "CloseSession",
        "Remember",
        "DebugUser",
        "PutVocabularyPack",
        "UpsertWorkOrder",
        "ListPendingWorkOrders",
    }


def _brief(user_id: str, now_s: int) -> pb.BriefRequest:
    request = pb.BriefRequest(
        scope=scope_pb2.UserScope(tenant_id=TENANT, user_id=user_id),
        session_id="s1",
        query="what is my sister called?",
        channel=memory_pb2.CHANNEL_VOICE,
        identity_verified=True,
    )
    request.now.seconds = now_s
    return request


def test_invalid_utf8_is_invalid_argument_naming_the_field(
    mesh: ThreadedMesh, channel: grpc.Channel
) -> None:
    data = _brief("XXXXXXXX", _wall_seconds()).SerializeToString()
    bad = data.replace(b"XXXXXXXX", b"ab\xff\xfe\xc3\x28cd")
    with pytest.raises(grpc.RpcError) as refused:
        call(mesh, channel, "Brief", bad)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert details_of(refused.value)[1] == ["scope.user_id"]  # type: ignore[arg-type]


def test_undecodable_bytes_without_a_key_are_still_unauthenticated(
    mesh: ThreadedMesh, channel: grpc.Channel
) -> None:
    stub = raw_call(channel, "Brief", pb.BriefResponse)
    with pytest.raises(grpc.RpcError) as refused:
        stub(b"\xff\xff\xff\xff", timeout=10)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


def logged(caplog: pytest.LogCaptureFixture, count: int) -> list[str]:
    """The access log lines, once `count` are written (a call's line follows its answer)."""
    for _ in range(100):
        lines = [r.getMessage() for r in caplog.records if r.name == "memmesh.access"]
        if len(lines) >= count:
            return lines
        time.sleep(0.02)
    return lines


def settled(caplog: pytest.LogCaptureFixture) -> None:
    """Clears the captured access log once earlier calls' lines stop arriving.

    A call's line is written after its answer, so a line of the previous test's last
    call can land after this test starts capturing.
    """
    count = -1
    while count != len(caplog.records):
        count = len(caplog.records)
        time.sleep(0.2)
    caplog.clear()


def test_the_access_log_holds_no_unauthenticated_forged_or_huge_identifier(
    mesh: ThreadedMesh, channel: grpc.Channel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="memmesh.access")
    settled(caplog)
    marker = uuid.uuid4().hex
    forged = f"{TENANT}\n2026-01-01 gateway INFO rpc method=/forged tenant={marker}"
    huge = f"{marker}{'t' * 3_000_000}"
    stub = raw_call(channel, "Brief", pb.BriefResponse)
    codes = []
    for tenant, key in [
        (forged, TENANT_KEY),  # authenticated caller, malformed id
        (huge, TENANT_KEY),
        (f"{marker}-other", "wrong-key"),  # unauthenticated caller
        (f"{marker}-other", TENANT_KEY),  # authenticated, another tenant
    ]:
        request = _brief("u1", _wall_seconds())
        request.scope.tenant_id = tenant
        try:
            stub(
                request.SerializeToString(),
                metadata=[("authorization", f"Bearer {key}")],
                timeout=20,
            )
        except grpc.RpcError as error:
            codes.append(error.code())
    assert codes == [
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
    ]
    lines = logged(caplog, 4)
    assert [line.split(" code=")[1].split()[0] for line in lines] == [
        "INVALID_ARGUMENT",
        "INVALID_ARGUMENT",
        "UNAUTHENTICATED",
        "PERMISSION_DENIED",
    ]
    for line in lines:
        assert "\n" not in line and len(line) < 400
        assert marker not in line, line  # nothing the refused callers sent was logged
    # A well-formed call of an authenticated tenant is logged with its tenant.
    settled(caplog)
    raw_call(channel, "Brief", pb.BriefResponse)(
        _brief("u1", _wall_seconds()).SerializeToString(), metadata=metadata(mesh), timeout=20
    )
    assert f"tenant={TENANT} " in logged(caplog, 1)[0]
