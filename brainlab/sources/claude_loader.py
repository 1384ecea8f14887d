"""Load Claude Code transcripts into DuckDB incrementally: new files whole, grown files by tail.

Each file keeps in ``cc_files`` the byte offset after its last complete line. A run reads only
new bytes; an unfinished last line (a file still being written) is left for the next run. A
file that shrank or whose first bytes changed was rewritten: its rows are replaced. Every file
is written in one transaction with its error rows (``ingest_errors``, source ``claude``), so a
crash never leaves half a file. The SPEC §7 deduplication is global, so it lives in views over
the raw line tables: appending lines never needs to revisit earlier files.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from importlib import resources
from pathlib import Path

import duckdb
import orjson

from brainlab.errors import ConfigError, SourceError
from brainlab.sources import claude_code as cc
from brainlab.store.ingest import insert_rows

TABLES = ("cc_request_lines", "cc_tool_call_lines", "cc_tool_results", "cc_agent_links",
          "cc_compactions", "cc_spans")
HEAD_BYTES = 4096  # the first bytes hashed to notice a rewritten file
PRICES_ENV = "BRAINLAB_PRICES"

ProgressFn = Callable[[Path, str], None]


@dataclass
class ClaudeSummary:
    """What one run did: files read / unchanged / reset / removed, bytes, rows, errors."""

    read: int = 0
    unchanged: int = 0
    reset: int = 0
    removed: int = 0
    bytes_read: int = 0
    rows: int = 0
    errors: int = 0
    pending_files: int = 0
    unpriced_models: list[str] = field(default_factory=list)
    prices_files: list[str] = field(default_factory=list)


def default_root() -> Path:
    """Where Claude Code keeps transcripts: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects."""
    config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
    if config_dir:
        first = config_dir.split(",")[0].strip()
        return Path(first).expanduser() / "projects"
    return Path.home() / ".claude" / "projects"


def load_prices(user_file: str | os.PathLike | None = None) -> tuple[list[dict], list[str]]:
    """Load price rows: the package's dated table, then the user's file (argument or env)."""
    package = resources.files("brainlab") / "data" / "prices.toml"
    tables = [("brainlab/data/prices.toml", package.read_text(encoding="utf-8"))]
    user_file = user_file or os.environ.get(PRICES_ENV)
    if user_file:
        path = Path(user_file)
        if not path.is_file():
            raise ConfigError(f"price file not found: {path}")
        tables.append((str(path.resolve()), path.read_text(encoding="utf-8")))
    merged: dict[str, dict] = {}
    for name, text in tables:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{name}: {exc}") from exc
        as_of = data.get("as_of")
        as_of = date.fromisoformat(str(as_of)) if as_of else None
        for model, rates in (data.get("models") or {}).items():
            missing = {"input", "output", "cache_write_5m", "cache_read"} - set(rates)
            if missing:
                raise ConfigError(f"{name}: model {model!r} lacks {sorted(missing)}")
            merged[model] = {
                "model": model, "input_usd_mtok": float(rates["input"]),
                "output_usd_mtok": float(rates["output"]),
                "cache_write_5m_usd_mtok": float(rates["cache_write_5m"]),
                "cache_write_1h_usd_mtok": float(rates.get("cache_write_1h",
                                                           rates["cache_write_5m"])),
                "cache_read_usd_mtok": float(rates["cache_read"]),
                "long_context_threshold": rates.get("long_context_threshold"),
                "long_input_multiplier": rates.get("long_input_multiplier"),
                "long_output_multiplier": rates.get("long_output_multiplier"),
                "prices_as_of": as_of, "prices_file": name,
            }
    return list(merged.values()), [name for name, _ in tables]


def write_prices(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> None:
    """Replace the price table in the store (one transaction)."""
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM cc_prices")
        insert_rows(con, "cc_prices", rows)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def ingest_claude(con: duckdb.DuckDBPyConnection, root: str | os.PathLike,
                  prices: str | os.PathLike | None = None,
                  progress: ProgressFn | None = None) -> ClaudeSummary:
    """Read every transcript under ``root`` (only what is new since the last run)."""
    root = Path(root).expanduser()
    if not root.exists():
        raise SourceError(f"no transcripts at {root}")
    root = root.resolve()
    summary = ClaudeSummary()
    price_rows, summary.prices_files = load_prices(prices)
    write_prices(con, price_rows)
    files = cc.discover(root)
    prefix = str(root) if root.is_file() else str(root) + os.sep
    known = {row[0]: row for row in con.execute(
        "SELECT source_file, bytes_done, lines_done, pending_bytes, head_sha256, runs"
        " FROM cc_files WHERE source_file = ? OR starts_with(source_file, ?)",
        [str(root), prefix]).fetchall()}
    seen = set()
    for path in files:
        key = str(path.resolve())
        seen.add(key)
        status = load_file(con, path.resolve(), known.get(key), summary)
        if progress:
            progress(path, status)
    for gone in sorted(set(known) - seen):
        con.execute("BEGIN TRANSACTION")
        _delete_file(con, gone)
        con.execute("DELETE FROM cc_files WHERE source_file = ?", [gone])
        con.execute("COMMIT")
        summary.removed += 1
    summary.unpriced_models = [r[0] for r in con.execute(
        "SELECT model FROM cc_unpriced_models ORDER BY model").fetchall()]
    return summary


def load_file(con: duckdb.DuckDBPyConnection, path: Path, state: tuple | None,
              summary: ClaudeSummary) -> str:
    """Read one file from where the last run stopped; return loaded | unchanged | reset."""
    key = str(path)
    size = path.stat().st_size
    offset, lines_done, runs, reset = 0, 0, 0, False
    if state is not None:
        _, bytes_done, lines_done, pending, head, runs = state
        if size == bytes_done + pending and _head_hash(path, bytes_done) == head:
            summary.unchanged += 1
            return "unchanged"
        if size < bytes_done or _head_hash(path, bytes_done) != head:
            reset, lines_done = True, 0
        else:
            offset = bytes_done
    ctx = cc.FileContext.of(path)
    chunk = cc.Chunk()
    bytes_done, lines_done, pending = _read(path, offset, lines_done, size, ctx, chunk)
    meta = cc.read_meta(path, ctx) if ctx.layout == "subagent" and offset == 0 else None
    if meta:
        chunk.agent_links.append(meta)
    rows = {
        "cc_request_lines": chunk.requests, "cc_tool_call_lines": chunk.tool_calls,
        "cc_tool_results": chunk.tool_results, "cc_agent_links": chunk.agent_links,
        "cc_compactions": chunk.compactions, "cc_spans": cc.span_rows(chunk),
    }
    con.execute("BEGIN TRANSACTION")
    try:
        if reset or state is None:
            _delete_file(con, key)
        elif offset > 0:
            con.execute("DELETE FROM ingest_errors WHERE file = ? AND source = ? AND line IS NULL",
                        [key, cc.SOURCE])  # e.g. "empty file", no longer true
        for table, table_rows in rows.items():
            insert_rows(con, table, table_rows)
        insert_rows(con, "ingest_errors", chunk.errors)
        con.execute(
            "INSERT OR REPLACE INTO cc_files VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [key, ctx.layout, bytes_done, lines_done, pending, _head_hash(path, bytes_done),
             size, runs + 1])
        con.execute(
            "INSERT OR REPLACE INTO ingest_files VALUES (?, ?, ?, ?, "
            "(SELECT count(*) FROM cc_request_lines WHERE source_file = ?), "
            "(SELECT count(*) FROM ingest_errors WHERE file = ? AND source = ?))",
            [key, cc.SOURCE, f"tail:{bytes_done}", bytes_done, key, key, cc.SOURCE])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    summary.read += 1
    summary.reset += reset
    summary.bytes_read += bytes_done - offset
    summary.rows += sum(len(v) for v in rows.values())
    summary.errors += len(chunk.errors)
    summary.pending_files += pending > 0
    return "reset" if reset else "loaded"


def _read(path: Path, offset: int, lines_done: int, size: int, ctx: cc.FileContext,
          chunk: cc.Chunk) -> tuple[int, int, int]:
    """Parse complete lines from ``offset``; return (bytes_done, lines_done, pending_bytes)."""
    if size == 0:
        chunk.error(ctx.path, None, "empty file: nothing to read", "warning")
        return 0, 0, 0
    position = offset
    with open(path, "rb") as handle:
        handle.seek(offset)
        for raw in handle:
            if not raw.endswith(b"\n"):
                # the last line has no newline: complete if it parses, else still being written
                try:
                    orjson.loads(raw)
                except orjson.JSONDecodeError:
                    return position, lines_done, len(raw)
            position += len(raw)
            lines_done += 1
            if not raw.strip():
                continue
            for obj in cc.load_line(raw, ctx, lines_done, chunk):
                cc.parse_object(obj, ctx, lines_done, chunk)
    return position, lines_done, 0


def _head_hash(path: Path, bytes_done: int) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read(min(HEAD_BYTES, bytes_done))).hexdigest()


def _delete_file(con: duckdb.DuckDBPyConnection, key: str) -> None:
    for table in TABLES:
        con.execute(f'DELETE FROM "{table}" WHERE source_file = ?', [key])
    con.execute("DELETE FROM ingest_errors WHERE file = ? AND source = ?", [key, cc.SOURCE])
    con.execute("DELETE FROM ingest_files WHERE file = ? AND source = ?", [key, cc.SOURCE])
