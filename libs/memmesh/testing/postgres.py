"""Scratch PostgreSQL databases: one per run of a mesh, so its bytes are its own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql


@contextmanager
def scratch_database(admin_url: str, name: str) -> Iterator[str]:
    """A new, empty PostgreSQL database for one run (every byte in it is the mesh's);
    dropped afterwards. Yields its URL."""
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    base, _, _ = admin_url.rpartition("/")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def new_database_name(prefix: str) -> str:
    """A database name no other run uses, starting with `prefix`."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"
