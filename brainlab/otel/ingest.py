"""``brainlab ingest otel PATH...``: telemetry files into the store, incrementally, by content.

A file is known by its content, not its path: ``file_key`` is the hash of its first bytes
(up to HEAD_BYTES, as the transcript ingest's head hash, ``transcripts/plan.py``) with their
length. A file the collector rotated (``data.json`` renamed ``data-2026-...json``) or a copy
is the same file and is read only from where the last run stopped; a grown file is read from
its byte offset; a whole-file zstd stream that grew is read again whole. Each file's new rows,
problem rows and bookkeeping are written in one transaction; rows outlive their files.
After a run that wrote rows the usage roll-up (``store/usage_rollup.py``) is rebuilt, since
telemetry-only calls count in every usage view.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from brainlab.common.errors import ConfigError, SourceError
from brainlab.otel import decode, framing, vocab

HEAD_BYTES = 4096
TABLES = ("otel_events", "otel_metric_points", "otel_spans", "otel_attributes")
# names a folder walk takes (a file named on the command line is always read)
SUFFIXES = {"", ".json", ".jsonl", ".ndjson", ".log", ".pb", ".proto", ".bin", ".zst", ".zstd"}
IDENTITY_ENV = "BRAINLAB_IDENTITY_KEY"


@dataclass
class OtelSummary:
    """What one ``ingest otel`` run did."""

    read: int = 0
    unchanged: int = 0
    renamed: int = 0
    bytes_read: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    warnings: int = 0
    files: int = 0

    def lines(self) -> list[str]:
        """What the run did, as ``brainlab ingest otel`` prints it (then the problems line)."""
        rows = self.rows
        return [f"otel {self.read} read, {self.unchanged} unchanged, {self.renamed} renamed,"
                f" {self.bytes_read / 1e6:.1f} MB",
                f"{rows.get('otel_events', 0):,} events, {rows.get('otel_metric_points', 0):,}"
                f" metric points, {rows.get('otel_spans', 0):,} spans,"
                f" {rows.get('otel_attributes', 0):,} other attributes"]


def discover(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """The files to read: each file given, and the telemetry-named files under each folder."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.is_file()
                                and not p.name.startswith(".")
                                and "".join(p.suffixes[-1:]).lower() in SUFFIXES))
        elif path.is_file():
            found.append(path)
        else:
            raise SourceError(f"{path}: no such file or folder; give the folder or files the"
                              " collector's file exporter writes")
    seen, unique = set(), []
    for path in found:
        real = path.resolve()
        if real not in seen:
            seen.add(real)
            unique.append(real)
    return unique


def identity_key(hash_identities: bool) -> bytes | None:
    """The key of ``--hash-identities`` ($BRAINLAB_IDENTITY_KEY), or None when not asked."""
    if not hash_identities:
        return None
    key = os.environ.get(IDENTITY_ENV, "")
    if len(key) < 16:
        raise ConfigError(f"--hash-identities needs a secret key of 16 characters or more in"
                          f" ${IDENTITY_ENV} (the same key gives the same hashes next run)")
    return key.encode()


def ingest_otel_db(db: str | os.PathLike, paths: Sequence[str | os.PathLike],
                   hash_identities: bool = False,
                   progress: Callable[[], None] | None = None) -> OtelSummary:
    """Open the store read-write, ingest ``paths`` (:func:`ingest_otel`), close it."""
    from brainlab.store import open_writer

    files = discover(paths)
    key = identity_key(hash_identities)
    con = open_writer(db)
    try:
        return ingest_otel(con, files, identity=key, progress=progress)
    finally:
        con.close()


def ingest_otel(con, files: Sequence[Path], identity: bytes | None = None,
                progress: Callable[[], None] | None = None,
                limits: framing.Limits = framing.LIMITS) -> OtelSummary:
    """Read each of ``files`` (new content only) into the otel tables of ``con``.

    ``limits``: the caps of :class:`framing.Limits` (spec/ranges.py; tests pass small ones).
    """
    from brainlab.store import usage_rollup

    summary = OtelSummary(files=len(files))
    types = _column_types(con)
    wrote = False
    for path in files:
        try:
            plan = _plan(con, path)
        except OSError as exc:  # unreadable: one error row, the other files go on
            _unreadable(con, path, exc)
            summary.errors += 1
            continue
        if plan is None:
            summary.unchanged += 1
        else:
            file_key, start, lines, known, renamed = plan
            if renamed:
                summary.renamed += 1
            try:
                wrote = _read_file(con, types, path, plan, identity, limits, summary, wrote)
            except OSError as exc:
                _unreadable(con, path, exc)
                summary.errors += 1
                continue
        if progress:
            progress()
    if wrote:
        from brainlab.store.connection import seal_writer

        seal_writer(con)  # the roll-up runs the store's views: external access off (issue 46)
        usage_rollup.refresh(con)
    return summary


def _read_file(con, types, path: Path, plan, identity, limits: framing.Limits,
               summary: OtelSummary, wrote: bool) -> bool:
    """Read one file batch by batch, each batch in its own transaction; True once rows changed."""
    file_key, start, lines, known, _renamed = plan
    read_any = False
    for chunk in framing.read(path, start, lines, limits):
        if chunk.first and chunk.last and not chunk.messages and not chunk.problems \
                and not chunk.whole and chunk.bytes_done == start:
            summary.unchanged += 1
            _touch(con, file_key, path)
            return wrote
        rows = decode.Rows(file_key, str(path), identity, limits.problems)
        for line, reason, severity in chunk.problems:
            rows.problem(line, reason, severity)
        for message in chunk.messages:
            decode.decode_message(rows, message.line, message.kind, message.data)
        chunk.messages.clear()  # the bytes are decoded: let them go before the insert
        restart = chunk.first and (chunk.whole or (known is not None and start == 0))
        _write(con, types, path, file_key, known, restart, chunk, rows, first=not wrote)
        wrote = True
        read_any = True
        summary.bytes_read += chunk.content
        for table, table_rows in rows.tables.items():
            summary.rows[table] = summary.rows.get(table, 0) + len(table_rows)
        summary.errors += sum(1 for p in rows.problems if p[2] == "error")
        summary.warnings += sum(1 for p in rows.problems if p[2] != "error")
    if read_any:
        summary.read += 1
    return wrote


def _unreadable(con, path: Path, exc: OSError) -> None:
    con.execute("DELETE FROM ingest_errors WHERE file = ? AND source = ? AND line IS NULL"
                " AND starts_with(reason, 'cannot read: ')", [str(path), vocab.SOURCE])
    con.execute("INSERT INTO ingest_errors (file, line, reason, source, severity)"
                " VALUES (?, NULL, ?, ?, 'error')",
                [str(path), f"cannot read: {exc.strerror or exc}", vocab.SOURCE])


def _head(path: Path) -> tuple[bytes, int, str, bytes]:
    """The file's first content bytes, its size, encoding and first raw bytes.

    The content of a zstd stream is read decompressed; its raw bytes are what an older
    release's key hashed (before issue 47).
    """
    with open(path, "rb") as handle:
        raw, size = handle.read(HEAD_BYTES), os.fstat(handle.fileno()).st_size
    encoding = framing.sniff(raw[:4])
    content = framing.content_head(path, HEAD_BYTES) if encoding == "zstd-stream" else raw
    return content, size, encoding, raw


def _key(head: bytes) -> str:
    return f"{len(head)}:{hashlib.sha256(head).hexdigest()[:40]}"


def _plan(con, path: Path):
    """(file_key, start byte, lines before it, known row or None, renamed) or None if unchanged."""
    head, size, encoding_now, raw = _head(path)
    if size == 0:
        return None
    lengths = [n for (n,) in con.execute("SELECT DISTINCT head_bytes FROM otel_files"
                                         " WHERE head_bytes <= ?", [len(head)]).fetchall()]
    keys = sorted({_key(head[:n]) for n in lengths}, key=lambda k: -int(k.split(":")[0]))
    if raw != head:  # a zstd stream an older release keyed by its compressed bytes
        keys += [_key(raw[:n]) for n in sorted(lengths, reverse=True) if n <= len(raw)]
    known = None
    for key in keys:
        known = con.execute("SELECT file_key, source_file, bytes_done, lines_done, size_seen,"
                            " encoding FROM otel_files WHERE file_key = ?", [key]).fetchone()
        if known:
            break
    if known is None:
        return _key(head), 0, 0, None, False
    file_key, seen_at, bytes_done, lines_done, size_seen, encoding = known
    renamed = seen_at != str(path)
    if renamed and (encoding == "zstd-stream") != (encoding_now == "zstd-stream") \
            and Path(seen_at).is_file():
        return None  # the same content in the other encoding (JSON and zstd): kept once
    if size == size_seen and size <= bytes_done:
        if renamed:
            _touch(con, file_key, path)
            return file_key, bytes_done, lines_done, known, True  # reads nothing new
        return None
    if size < bytes_done or encoding == "zstd-stream":
        return file_key, 0, 0, known, renamed  # rewritten, or a stream: read whole again
    return file_key, bytes_done, lines_done, known, renamed


def _touch(con, file_key: str, path: Path) -> None:
    con.execute("UPDATE otel_files SET source_file = ? WHERE file_key = ?", [str(path), file_key])


def _column_types(con) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns()"
            " WHERE schema_name = 'main' AND database_name = current_database()"
            " AND table_name IN (SELECT unnest(?::VARCHAR[])) ORDER BY table_name, column_index",
            [list(TABLES)]).fetchall():
        out.setdefault(table, []).append((column, data_type))
    return out


def _insert(con, typed: list[tuple[str, str]], table: str, rows: list[dict]) -> None:
    """Append ``rows`` as one list per column, unnested side by side (no Arrow, no pandas)."""
    names = [c for c, _ in typed]
    select = ", ".join(
        f'make_timestamp(unnest(${i}::BIGINT[])) AS "{c}"' if t == "TIMESTAMP"
        else f'unnest(${i}::{t}[]) AS "{c}"' for i, (c, t) in enumerate(typed, 1))
    con.execute(f"INSERT INTO {table} BY NAME SELECT {select}",
                [[r.get(c) for r in rows] for c in names])


def _write(con, types, path: Path, file_key: str, known, restart: bool,
           chunk: framing.Chunk, rows: decode.Rows, first: bool = False) -> None:
    """One batch's rows, problems and bookkeeping in one transaction.

    ``restart``: the first batch of a file read again from its start (rewritten, or a zstd
    stream read whole): the file's earlier rows and problems go first. ``first``: the run's
    first write, which also removes the usage roll-up's key and makes the stored change
    points stale, with its rows or not at all (a full disk keeps the key: issue 47).
    """
    from brainlab.store import trend_scan, usage_rollup

    con.execute("BEGIN TRANSACTION")
    try:
        if first:
            usage_rollup.invalidate(con)
            trend_scan.inputs_changed(con)  # no rescan here: no pandas (issue 12)
        if restart:
            for table in TABLES:
                con.execute(f"DELETE FROM {table} WHERE file_key = ?", [file_key])
            con.execute("DELETE FROM ingest_errors WHERE file IN (?, ?) AND source = ?",
                        [known[1] if known else str(path), str(path), vocab.SOURCE])
        for table in TABLES:
            table_rows = rows.tables.get(table)
            if table_rows:
                _insert(con, types[table], table, table_rows)
        if rows.problems:
            con.executemany("INSERT INTO ingest_errors (file, line, reason, source, severity)"
                            " VALUES (?, ?, ?, ?, ?)",
                            [[str(path), line, reason, vocab.SOURCE, severity]
                             for line, reason, severity in rows.problems])
        size = os.stat(path).st_size
        con.execute(
            "INSERT INTO otel_files VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT (file_key)"
            " DO UPDATE SET source_file = excluded.source_file, encoding = excluded.encoding,"
            " bytes_done = excluded.bytes_done, lines_done = excluded.lines_done,"
            " size_seen = excluded.size_seen, runs = otel_files.runs + 1,"
            " records = CASE WHEN ? THEN 0 ELSE otel_files.records END + excluded.records,"
            " errors = CASE WHEN ? THEN 0 ELSE otel_files.errors END + excluded.errors",
            [file_key, str(path), int(file_key.split(":")[0]), chunk.encoding, chunk.bytes_done,
             chunk.lines_done, size, rows.count(), len(rows.problems), restart, restart])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise

