"""Scans every byte a run's mesh wrote, and every Brief it answered, for the markers the
user asked to forget (anywhere) or never to be mentioned (in Briefs).

Matching is case-insensitive on the text decoded from UTF-8 (raw file bytes included, so
free pages and WAL frames count), with JSON `\\uXXXX` escapes read as the characters they
stand for. A word marker is found by its core (the word less its last letter, so stemmed
copies count); a PIN by its digits with no digit either side. Every marker of a run
starts with the run's tag, so a scan finds candidates with one pattern and looks them up.

Surfaces: `db_files` (raw bytes of each SQLite file), `db_wal` (SQLite write-ahead logs),
`db_rows` (every column of every live row, SQLite or PostgreSQL), `db_pages` (raw bytes of
every PostgreSQL relation file of the run's database after a CHECKPOINT: heap, TOAST and
index pages, dead tuples included), `redis` (every key and value), `other_files` (anything
else under the data directory), `logs` (engine stdout and stderr), `spans` and `metrics`
(every OTLP export of each). Counts are occurrences; `*_markers` counts distinct markers. PostgreSQL's WAL
segments (`server_wal`) are counted apart: the server writes them for every database.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import redis
from psycopg import sql

from memmesh.bench.privacy_audit.driver import Run
from memmesh.bench.privacy_audit.generator import Fate, Marker, Script, core_of

_ESCAPE = re.compile(r"\\u([0-9a-f]{4})")
MAX_EXAMPLES = 12


@dataclass(frozen=True)
class Hit:
    surface: str
    where: str
    marker: Marker
    snippet: str


class Needles:
    """Every marker of a script, found in text by one pattern and a lookup."""

    def __init__(self, script: Script) -> None:
        self.by_core = {core_of(m.text): m for m in script.markers}
        self._pattern = re.compile(
            rf"{re.escape(script.tag.lower())}(?:\w|\\u[0-9a-f]{{4}})+|(?<!\d)\d{{9}}(?!\d)"
        )

    def find(self, text: str) -> Iterator[tuple[Marker, str]]:
        """Markers in `text` (any case), each with a snippet around it."""
        lowered = text.lower()
        for match in self._pattern.finditer(lowered):
            word = _ESCAPE.sub(lambda e: chr(int(e.group(1), 16)), match.group(0))
            found = self._lookup(word)
            if found is not None:
                start, end = max(match.start() - 40, 0), min(match.end() + 40, len(text))
                yield found, text[start:end]

    def find_bytes(self, data: bytes) -> Iterator[tuple[Marker, str]]:
        return self.find(data.decode("utf-8", errors="replace"))

    def _lookup(self, word: str) -> Marker | None:
        if word.isdigit():
            return self.by_core.get(word)
        for end in range(len(word), 2, -1):
            found = self.by_core.get(word[:end])
            if found is not None:
                return found
        return None


@dataclass
class Report:
    """Counts of one backend's run."""

    label: str
    copies: Counter[str] = field(default_factory=Counter)
    markers: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    controls: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    leaking_briefs: int = 0
    brief_hits: Counter[str] = field(default_factory=Counter)
    cross_user_brief_hits: int = 0
    by_rule: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    examples: list[Hit] = field(default_factory=list)
    briefs: int = 0
    degraded_briefs: int = 0

    def storage_hit(self, hit: Hit) -> None:
        if hit.marker.fate is Fate.KEPT:
            self.controls[hit.surface].add(hit.marker.text)
            return
        if hit.marker.fate is not Fate.FORGOTTEN:
            return  # an unmentionable subject may be stored; it is judged in Briefs
        self.copies[hit.surface] += 1
        self.markers[hit.surface].add(hit.marker.text)
        self.by_rule[f"{hit.marker.rule}({hit.marker.kind})"].add(hit.marker.text)
        self._example(hit)

    def _example(self, hit: Hit) -> None:
        same_surface = sum(1 for e in self.examples if e.surface == hit.surface)
        if len(self.examples) < MAX_EXAMPLES and same_surface < 3:
            self.examples.append(hit)

    def as_json(self, surfaces: Iterable[str]) -> dict[str, object]:
        # The usual surfaces of the backend, then any other where something was found.
        surfaces = list(surfaces)
        surfaces += sorted((set(self.copies) | set(self.controls)) - set(surfaces))
        return {
            "surviving_copies": {s: self.copies[s] for s in surfaces},
            "surviving_copies_total": sum(self.copies.values()),
            "surviving_markers": {s: len(self.markers[s]) for s in surfaces},
            # Kept markers found per surface: shows each scan reads what the mesh stored.
            "controls_found": {s: len(self.controls[s]) for s in surfaces},
            "leaking_briefs": self.leaking_briefs,
            "leaking_brief_markers_by_rule": dict(sorted(self.brief_hits.items())),
            "cross_user_brief_hits": self.cross_user_brief_hits,
            "briefs": self.briefs,
            "degraded_briefs": self.degraded_briefs,
            "surviving_markers_by_rule": {k: len(v) for k, v in sorted(self.by_rule.items())},
            "examples": [
                {
                    "surface": e.surface,
                    "where": e.where,
                    "marker": e.marker.text,
                    "user": e.marker.user_id,
                    "rule": e.marker.rule,
                    "snippet": e.snippet.encode("unicode_escape").decode("ascii")[:160],
                }
                for e in self.examples
            ],
        }


def _scan(report: Report, needles: Needles, surface: str, where: str, data: bytes | str) -> None:
    found = needles.find_bytes(data) if isinstance(data, bytes) else needles.find(data)
    for marker, snippet in found:
        report.storage_hit(Hit(surface, where, marker, snippet))


def _value_text(value: object) -> bytes | str | None:
    if value is None or isinstance(value, (int, float, bool)):
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def scan_files(report: Report, needles: Needles, data_dir: Path) -> None:
    """Raw bytes of every file under the data directory."""
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file()):
        name = path.name
        if name.endswith("-wal"):
            surface = "db_wal"
        elif name.endswith((".sqlite3", ".sqlite", ".db")):
            surface = "db_files"
        else:
            surface = "other_files"
        _scan(report, needles, surface, str(path.relative_to(data_dir)), path.read_bytes())


def scan_sqlite_rows(report: Report, needles: Needles, data_dir: Path) -> None:
    """Every column of every live row of every SQLite database (read-only)."""
    for path in sorted(data_dir.rglob("*.sqlite3")):
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        connection.text_factory = bytes
        try:
            tables = [
                row[0].decode()
                for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            ]
            for table in tables:
                quoted = '"' + table.replace('"', '""') + '"'
                for row in connection.execute(f"SELECT * FROM {quoted}"):  # noqa: S608 - names from sqlite_master
                    for value in row:
                        text = _value_text(value)
                        if text is not None:
                            _scan(report, needles, "db_rows", f"{path.name}:{table}", text)
        finally:
            connection.close()


def scan_postgres(report: Report, needles: Needles, url: str) -> None:
    """Every live row of every table of the run's database, then the raw pages of every
    relation (dead tuples and index entries included) after a CHECKPOINT."""
    with psycopg.connect(url, autocommit=True) as connection:
        tables = connection.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') "
            "AND table_type = 'BASE TABLE'"
        ).fetchall()
        for schema, table in tables:
            query = sql.SQL("SELECT * FROM {}.{}").format(
                sql.Identifier(schema), sql.Identifier(table)
            )
            with connection.cursor() as cursor:
                for row in cursor.execute(query):
                    for value in row:
                        text = _value_text(value)
                        if text is not None:
                            _scan(report, needles, "db_rows", f"{schema}.{table}", text)
        connection.execute("CHECKPOINT")
        relations = connection.execute(
            "SELECT n.nspname || '.' || c.relname, pg_relation_filepath(c.oid) "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind IN ('r', 't', 'i', 'm') "
            "AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
            "AND pg_relation_filepath(c.oid) IS NOT NULL"
        ).fetchall()
        for name, path in relations:
            segment = 0
            while True:
                file = path if segment == 0 else f"{path}.{segment}"
                page = connection.execute(
                    "SELECT pg_read_binary_file(%s::text, 0, (pg_stat_file(%s::text, true)).size, true)",
                    (file, file),
                ).fetchone()
                if page is None or page[0] is None:
                    break
                _scan(report, needles, "db_pages", f"{name} ({file})", bytes(page[0]))
                segment += 1


_WAL_SEGMENT = re.compile(r"[0-9A-F]{24}")


def scan_pg_wal(report: Report, needles: Needles, url: str) -> None:
    """Every segment of the server's write-ahead log (pg_wal), whole. The WAL is shared by
    every database of the server, so only markers of this run's script count."""
    with psycopg.connect(url, autocommit=True) as connection:
        segments = connection.execute(
            "SELECT name, size FROM pg_ls_waldir() ORDER BY name"
        ).fetchall()
        for name, size in segments:
            if not _WAL_SEGMENT.fullmatch(name):
                continue
            row = connection.execute(
                "SELECT pg_read_binary_file(%s::text, 0, %s, true)", (f"pg_wal/{name}", size)
            ).fetchone()
            if row is not None and row[0] is not None:
                _scan(report, needles, "pg_wal", name, bytes(row[0]))


# A key's hash tag names the tenant whose data it holds: "{<tenant>\x1f<user>}".
_AUDIT_TENANT_TAG = re.compile(r"\{(audit-[0-9a-f]+)\x1f")


def scan_redis(report: Report, needles: Needles, url: str, tenant: str = "") -> None:
    """Every key of the Redis database and its value, whatever its type, except the keys
    of another audit run's tenant: the Redis server is shared and keeps them for a day,
    and their made-up words can look like this run's (markers are matched by stem)."""
    client = redis.Redis.from_url(url)
    try:
        for key in client.scan_iter(count=1000):
            where = bytes(key).decode("utf-8", errors="replace")[:80]
            tagged = _AUDIT_TENANT_TAG.search(where)
            if tenant and tagged is not None and tagged.group(1) != tenant:
                continue
            for value in [key, *_redis_values(client, key)]:
                text = _value_text(value)
                if text is not None:
                    _scan(report, needles, "redis", where, text)
    finally:
        client.close()


def _redis_values(client: redis.Redis, key: bytes) -> list[object]:
    found = client.type(key)
    kind = found.decode() if isinstance(found, bytes) else str(found)
    if kind == "string":
        return [client.get(key)]
    if kind == "hash":
        return [part for pair in dict(client.hgetall(key)).items() for part in pair]
    if kind == "list":
        return list(client.lrange(key, 0, -1))
    if kind == "set":
        return list(client.smembers(key))
    if kind == "zset":
        return [pair[0] for pair in client.zrange(key, 0, -1, withscores=True)]
    if kind == "stream":
        return [
            part
            for _, entry in client.xrange(key) or []
            for pair in dict(entry or {}).items()
            for part in pair
        ]
    return []


def scan_logs(report: Report, needles: Needles, log_dir: Path) -> None:
    for path in sorted(log_dir.glob("*.log")):
        _scan(report, needles, "logs", path.name, path.read_bytes())


def scan_exports(report: Report, needles: Needles, surface: str, exports: list[bytes]) -> None:
    """Every OTLP export request of one kind (`spans` or `metrics`), whole."""
    for number, export in enumerate(exports):
        _scan(report, needles, surface, f"export {number}", export)


def scan_briefs(report: Report, needles: Needles, run: Run) -> None:
    """A Brief leaks when it holds a marker the user had, before it, asked to forget or
    never to mention, or any marker of another user."""
    for record in run.briefs:
        report.briefs += 1
        report.degraded_briefs += int(record.degraded)
        judged = {
            m.text
            for m in record.user.markers
            if m.fate is not Fate.KEPT
            and m.effective_step is not None
            and m.effective_step < record.step_index
        }
        leaked = False
        for marker, snippet in needles.find(record.text):
            if marker.user_id != record.user.user_id:
                report.cross_user_brief_hits += 1
                leaked = True
            elif marker.text in judged:
                report.brief_hits[f"{marker.rule}({marker.kind})"] += 1
                leaked = True
            else:
                continue
            hit = Hit(
                f"brief:{record.probe}",
                f"{record.user.user_id} step {record.step_index}",
                marker,
                snippet,
            )
            if sum(1 for e in report.examples if e.surface.startswith("brief")) < 4:
                report.examples.append(hit)
        report.leaking_briefs += int(leaked)


SQLITE_SURFACES = ("db_files", "db_wal", "db_rows", "other_files", "logs", "spans", "metrics")
POSTGRES_SURFACES = ("db_rows", "db_pages", "redis", "other_files", "logs", "spans", "metrics")


def scan(run: Run, script: Script, *, server_wal: bool = True) -> dict[str, object]:
    """Every surface of one run, then its Briefs; the counts as JSON-ready data. With
    `server_wal`, PostgreSQL's WAL is read too and its copies counted on their own."""
    needles = Needles(script)
    report = Report(run.label)
    scan_files(report, needles, run.data_dir)
    wal: Report | None = None
    if run.postgres_url:
        scan_postgres(report, needles, run.postgres_url)
        surfaces = POSTGRES_SURFACES
        if server_wal:
            wal = Report(run.label)
            scan_pg_wal(wal, needles, run.postgres_url)
    else:
        scan_sqlite_rows(report, needles, run.data_dir)
        surfaces = SQLITE_SURFACES
    if run.redis_url:
        scan_redis(report, needles, run.redis_url, run.tenant)
    scan_logs(report, needles, run.log_dir)
    scan_exports(report, needles, "spans", run.span_exports)
    scan_exports(report, needles, "metrics", run.metric_exports)
    scan_briefs(report, needles, run)
    result = report.as_json(surfaces)
    if wal is not None:
        # The server's WAL, not the mesh's files: every database of the server writes it,
        # and only the server's checkpoints and settings retire it (see the README).
        result["server_wal"] = {
            "surviving_copies": wal.copies["pg_wal"],
            "surviving_markers": len(wal.markers["pg_wal"]),
            "controls_found": len(wal.controls["pg_wal"]),
        }
    # How many OTLP export requests were read: a zero count of copies in none would prove nothing.
    result["telemetry_exports"] = {
        "spans": len(run.span_exports),
        "metrics": len(run.metric_exports),
    }
    result["errors"] = dict(sorted(run.errors.items()))
    result["error_details"] = dict(sorted(run.error_details.items()))
    result["users_played"] = run.users_played
    result["mean_ms"] = run.mean_ms
    result["seconds"] = run.seconds
    result["drain_seconds"] = run.drain_seconds
    result["users_undrained"] = run.users_undrained
    return result
