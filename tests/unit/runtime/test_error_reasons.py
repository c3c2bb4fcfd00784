"""Every ErrorInfo reason the code can send is a value of memmesh.common.v1.ErrorReason."""

from __future__ import annotations

import ast
from pathlib import Path

from memmesh import errors
from memmesh.common.v1 import errors_pb2

ROOT = Path(__file__).resolve().parents[3]
DECLARED = {name.removeprefix("ERROR_REASON_") for name in errors_pb2.ErrorReason.keys()} - {
    "UNSPECIFIED"
}


def _reasons_in_source() -> set[str]:
    """String literals given as `reason=` or assigned to `reason` in a class body."""
    found: set[str] = set()
    for path in [
        *ROOT.joinpath("services").rglob("*.py"),
        *ROOT.joinpath("libs/memmesh").rglob("*.py"),
    ]:
        if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.keyword)
                and node.arg == "reason"
                and isinstance(node.value, ast.Constant)
            ):
                found.add(str(node.value.value))
            if isinstance(node, ast.ClassDef):
                for statement in node.body:
                    if (
                        isinstance(statement, ast.Assign)
                        and any(
                            isinstance(t, ast.Name) and t.id == "reason" for t in statement.targets
                        )
                        and isinstance(statement.value, ast.Constant)
                    ):
                        found.add(str(statement.value.value))
    return found


def test_every_reason_raised_in_code_is_declared_in_errors_proto() -> None:
    reasons = _reasons_in_source()
    assert "INVALID_FIELD" in reasons  # the scan sees the error classes
    assert reasons <= DECLARED, sorted(reasons - DECLARED)


def test_a_peer_refusing_the_input_is_passed_through_not_turned_into_unavailable() -> None:
    refused = errors.DependencyFailed(
        "ledger", "INVALID_ARGUMENT", "bad time", peer_reason="INVALID_FIELD"
    )
    assert refused.status_name == "INVALID_ARGUMENT"
    assert refused.reason == "INVALID_FIELD"
    assert refused.metadata["engine"] == "ledger"
    down = errors.DependencyFailed("ledger", "UNAVAILABLE")
    assert (down.status_name, down.reason) == ("UNAVAILABLE", "DEPENDENCY_FAILED")
    late = errors.DependencyFailed("ledger", "DEADLINE_EXCEEDED")
    assert (late.status_name, late.reason, late.timed_out) == (
        "DEADLINE_EXCEEDED",
        "DEPENDENCY_TIMEOUT",
        True,
    )
