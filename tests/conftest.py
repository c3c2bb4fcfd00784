"""Shared fixtures: real backends, random user scopes."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest

from memmesh.common.v1 import scope_pb2
from memmesh.testing.postgres import new_database_name, scratch_database
from memmesh.testing.scopes import new_scope

POSTGRES_URL = os.environ.get(
    "MEMMESH_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("MEMMESH_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
# Set by .ci/run: a missing backend is a failure there, a skip on a laptop.
REQUIRE_BACKENDS = (
    os.environ.get("MEMMESH_REQUIRE_BACKENDS") == "1" or os.environ.get("CI") == "true"
)


def _reachable(url: str) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection(
            (parsed.hostname or "127.0.0.1", parsed.port or 0), timeout=1
        ):
            return True
    except OSError:
        return False


def _backend(url: str, what: str) -> str:
    if _reachable(url):
        return url
    message = f"{what} is not reachable at {url}"
    if REQUIRE_BACKENDS:
        pytest.fail(message + " (required in CI)")
    pytest.skip(message + "; start it or set MEMMESH_TEST_*_URL")


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """URL of the real PostgreSQL server the suites run against."""
    return _backend(POSTGRES_URL, "PostgreSQL")


@pytest.fixture(scope="module")
def scratch_postgres_url(postgres_url: str) -> Iterator[str]:
    """A new, empty database for one module's engine processes, dropped afterwards. Engines
    sharing a database share their outbox tables: another module's mesh running at the same
    moment would deliver this mesh's queued effects to its own engines."""
    with scratch_database(postgres_url, new_database_name("memmesh_test")) as url:
        yield url


@pytest.fixture(scope="session")
def redis_url() -> str:
    """URL of the real Redis server the suites run against."""
    return _backend(REDIS_URL, "Redis")


@pytest.fixture
def scope() -> scope_pb2.UserScope:
    return new_scope()


# Files that take minutes on their own (training the extraction heads again): run first, so
# the other worker runs the rest of the suite beside them instead of waiting on them at the end.
SLOW_FILES_FIRST = ("tests/unit/atom_extractor/test_learned_head_files.py",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(SLOW_FILES_FIRST))
