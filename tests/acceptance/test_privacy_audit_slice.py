"""A seeded slice of the privacy audit (`make privacy-audit`) on real engine processes:
3 users' facts and privacy commands (FORGET, DO_NOT_STORE, DO_NOT_MENTION, FORGET_THREAD,
forget everything; spoken and through Command) through the gateway on SQLite and on
PostgreSQL + Redis. After it, no copy of a forgotten value survives on any surface the
mesh wrote, and no Brief holds a value the user had asked to forget or not to hear.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from memmesh.bench.privacy_audit.audit import audit_backend
from memmesh.bench.privacy_audit.driver import forget_everything_command
from memmesh.bench.privacy_audit.generator import Fate, Script, core_of, generate
from memmesh.bench.privacy_audit.scanner import Needles, Report, scan_files, scan_sqlite_rows
from memmesh.storage.sql import DELETED_REWRITE_INTERVAL_S

SLICE_SEED, SLICE_USERS, SLICE_TURNS = 8, 3, 20

SQLITE_SURFACES = ("db_files", "db_wal", "db_rows", "other_files", "logs", "spans", "metrics")
POSTGRES_SURFACES = ("db_rows", "db_pages", "redis", "other_files", "logs", "spans", "metrics")


@pytest.fixture(scope="module")
def script() -> Script:
    """The slice's script; its markers are new words each run (the structure is the
    seed's), so a copy another run left in the shared Redis is never counted."""
    return generate(
        seed=SLICE_SEED,
        users=SLICE_USERS,
        turns_per_user=SLICE_TURNS,
        tag_nonce=time.time_ns(),
        forget_everything_command=forget_everything_command(),
        forget_everything_every=SLICE_USERS,  # the last user forgets everything
    )


@pytest.fixture(scope="module")
def audits(script: Script) -> dict[str, dict[str, Any]]:
    """The slice on both backends, each on a fresh mesh (and a fresh PostgreSQL database).
    The server's WAL is left to the full audit (reading it takes long). The scan comes once
    the reclaim window has passed after the last call: on PostgreSQL an erased table is
    rewritten in the background within DELETED_REWRITE_INTERVAL_S (a rewrite left to the
    engines' shutdown could lose its table lock to deliveries still arriving)."""
    settle_s = {"sqlite": 3.0, "postgres": DELETED_REWRITE_INTERVAL_S + 2.0}
    return {
        backend: audit_backend(
            script, backend, concurrency=3, settle_s=settle_s[backend], server_wal=False
        )
        for backend in ("sqlite", "postgres")
    }


def test_the_slice_covers_every_command_in_both_forms(script: Script) -> None:
    steps = [s for u in script.users for s in u.steps]
    sent = {s.command for s in steps if s.kind == "command"}
    assert {"FORGET", "DO_NOT_STORE", "DO_NOT_MENTION", "FORGET_THREAD"} <= sent
    spoken = " ".join(s.text.lower() for s in steps if s.kind == "ingest")
    phrasings = {
        "FORGET": ("forget that", "delete that", "erase that", "forget what", "forget about my"),
        "DO_NOT_STORE": ("off the record", "don't remember this", "between us", "not store"),
        "DO_NOT_MENTION": ("stop mentioning", "never bring up", "don't mention", "quit talking"),
        "FORGET_THREAD": ("this conversation", "this whole chat", "this entire conversation"),
        "FORGET_EVERYTHING": ("forget everything about me",),
    }
    for command, phrases in phrasings.items():
        # "Forget everything" is spoken or sent, as the script alternates (one user has it).
        either = command == "FORGET_EVERYTHING" and command in sent
        assert either or any(p in spoken for p in phrases), command
    fates = {m.fate for m in script.markers}
    assert fates == {Fate.KEPT, Fate.FORGOTTEN, Fate.UNMENTIONABLE}


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_every_call_of_the_slice_is_answered_and_no_brief_is_empty(
    audits: dict[str, dict[str, Any]], backend: str
) -> None:
    """A failed call or an empty (degraded) Brief would hide a leak, so neither counts as clean."""
    audit = audits[backend]
    assert audit["errors"] == {}, audit["error_details"]
    assert audit["degraded_briefs"] == 0
    assert audit["users_undrained"] == 0  # the scan judged what the mesh keeps
    assert audit["briefs"] > 0


@pytest.mark.parametrize(
    ("backend", "surfaces"),
    [("sqlite", ("db_files", "db_rows")), ("postgres", ("db_rows", "db_pages", "redis"))],
)
def test_the_scan_finds_what_the_user_let_the_mesh_keep(
    audits: dict[str, dict[str, Any]], backend: str, surfaces: tuple[str, ...]
) -> None:
    """Kept facts are found where the mesh stores them: a zero elsewhere is a real zero."""
    for surface in surfaces:
        assert audits[backend]["controls_found"][surface] > 0, surface


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_every_engine_exported_spans_and_metrics_that_were_scanned(
    audits: dict[str, dict[str, Any]], backend: str
) -> None:
    exports = audits[backend]["telemetry_exports"]
    assert exports["spans"] > 0 and exports["metrics"] > 0, exports


@pytest.mark.parametrize(
    ("backend", "surface"),
    [("sqlite", s) for s in SQLITE_SURFACES] + [("postgres", s) for s in POSTGRES_SURFACES],
)
def test_no_copy_of_a_forgotten_value_survives(
    audits: dict[str, dict[str, Any]], backend: str, surface: str
) -> None:
    audit = audits[backend]
    examples = [e for e in audit["examples"] if e["surface"] == surface]
    assert audit["surviving_copies"][surface] == 0, examples


@pytest.mark.parametrize(("backend", "surface"), [("sqlite", "briefs"), ("postgres", "briefs")])
def test_no_brief_holds_a_forgotten_or_unmentionable_value(
    audits: dict[str, dict[str, Any]], backend: str, surface: str
) -> None:
    audit = audits[backend]
    examples = [e for e in audit["examples"] if e["surface"].startswith("brief")]
    assert audit["leaking_briefs"] == 0, (audit["leaking_brief_markers_by_rule"], examples)
    assert audit["cross_user_brief_hits"] == 0


def test_the_scanner_finds_a_value_in_any_case_escaped_inflected_or_on_a_free_page(
    tmp_path: Path,
) -> None:
    script = generate(seed=SLICE_SEED, users=10, turns_per_user=SLICE_TURNS, tag_nonce=1)
    forgotten = next(m for m in script.markers if m.fate is Fate.FORGOTTEN and not m.numeric)
    needles = Needles(script)
    word = forgotten.text.split()[0]
    escaped = word.encode("ascii", "backslashreplace").decode().replace("\\x", "\\u00")
    for text in (word.upper(), f'{{"x": "{escaped}"}}', f"{word}s", f"x{word.lower()}x"):
        assert [m.text for m, _ in needles.find(text)] == [forgotten.text], text
    pin = next(m for m in script.markers if m.numeric)
    assert [m.text for m, _ in needles.find(f"PIN {pin.text}.")] == [pin.text]
    assert list(needles.find(f"1{pin.text}")) == []
    assert core_of(forgotten.text) not in "the quick brown fox"

    # A deleted row is gone from the live rows but still in the file's free page.
    database = tmp_path / "engine.sqlite3"
    connection = sqlite3.connect(database)
    connection.execute("PRAGMA secure_delete = OFF")
    connection.execute("CREATE TABLE turns (text TEXT)")
    connection.execute("INSERT INTO turns VALUES (?)", (f"my sister {forgotten.text}",))
    connection.commit()
    connection.execute("DELETE FROM turns")
    connection.commit()
    connection.close()
    rows, files = Report("rows"), Report("files")
    scan_sqlite_rows(rows, needles, tmp_path)
    scan_files(files, needles, tmp_path)
    assert rows.copies["db_rows"] == 0
    assert files.copies["db_files"] == 1


def test_the_redis_scan_skips_only_another_audit_runs_keys() -> None:
    """The Redis server is shared: another run's tenant keys are not this run's copies, but
    every other key (this run's, or one naming no audit tenant) is read."""
    import redis

    from memmesh.bench.privacy_audit.audit import REDIS_URL
    from memmesh.bench.privacy_audit.scanner import scan_redis

    script = generate(seed=SLICE_SEED, users=10, turns_per_user=SLICE_TURNS, tag_nonce=2)
    forgotten = next(m for m in script.markers if m.fate is Fate.FORGOTTEN and not m.numeric)
    ours, theirs = "audit-0000aaaa", "audit-0000bbbb"
    keys = [
        f"memmesh:{{{ours}\x1fu1}}:scan-test:{time.time_ns()}",
        f"memmesh:{{{theirs}\x1fu1}}:scan-test:{time.time_ns()}",
        f"memmesh:untagged:scan-test:{time.time_ns()}",
    ]
    client = redis.Redis.from_url(REDIS_URL)
    try:
        for key in keys:
            client.set(key, f"my sister {forgotten.text}", ex=60)
        report = Report("redis")
        scan_redis(report, Needles(script), REDIS_URL, ours)
    finally:
        client.delete(*keys)
        client.close()
    found = {hit.where for hit in report.examples if hit.surface == "redis"}
    assert report.copies["redis"] == 2
    assert found == {keys[0][:80], keys[2][:80]}
