"""The tree keeps its floor plan: no import circles, libs/ never imports an engine, every
engine's domain/ is pure, and each engine has one SQL store."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SOURCE_ROOTS = (ROOT / "libs", ROOT / "services")
ENGINES = ROOT / "services" / "memmesh" / "engines"
# What a pure domain module may not import: transport, generated contracts, I/O, the event loop.
IMPURE_PREFIXES = (
    "grpc",
    "google.protobuf",
    "psycopg",
    "redis",
    "sqlite3",
    "asyncio",
    "memmesh.runtime",
)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for root in SOURCE_ROOTS:
        for path in root.rglob("*.py"):
            if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                yield f"{node.module}.{alias.name}"
            yield node.module


def _edges(name: str) -> set[str]:
    """The project modules a module imports (`from a.b import c` names a.b.c when it is one)."""
    return {
        imported for imported in _imports(MODULES[name]) if imported in MODULES and imported != name
    }


def _circles() -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    graph = {name: _edges(name) for name in MODULES}

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for other in sorted(graph[name]):
            if other not in index:
                visit(other)
                low[name] = min(low[name], low[other])
            elif other in on_stack:
                low[name] = min(low[name], index[other])
        if low[name] == index[name]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == name:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for name in sorted(MODULES):
        if name not in index:
            visit(name)
    return circles


def test_no_import_circles() -> None:
    assert _circles() == []


def test_libs_never_import_an_engine_or_a_benchmark() -> None:
    offenders = {
        name: sorted(
            i for i in _imports(path) if i.startswith(("memmesh.engines", "memmesh.bench"))
        )
        for name, path in MODULES.items()
        if path.is_relative_to(ROOT / "libs")
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_every_engine_domain_is_pure() -> None:
    offenders: dict[str, list[str]] = {}
    for name, path in MODULES.items():
        if not path.is_relative_to(ENGINES) or "domain" not in path.relative_to(ENGINES).parts:
            continue
        impure = sorted(
            i
            for i in _imports(path)
            if i.startswith(IMPURE_PREFIXES) or (".v1" in i and i.startswith("memmesh."))
        )
        if impure:
            offenders[name] = impure
    assert offenders == {}


def test_every_engine_has_one_sql_store_and_the_floor_plan() -> None:
    engines = sorted(p for p in ENGINES.iterdir() if p.is_dir() and (p / "main.py").exists())
    assert len(engines) == 9
    for engine in engines:
        assert not (
            (engine / "sqlite_store.py").exists() or (engine / "postgres_store.py").exists()
        ), engine.name
        assert not (engine / "service.py").exists(), (
            f"{engine.name}: use cases live in use_cases.py"
        )
        for part in ("main.py", "servicer.py", "mapping.py", "ports.py"):
            assert (engine / part).exists(), f"{engine.name} has no {part}"
