"""Out-of-range values an older brainlab stored, moved to ``ingest_errors`` (issue 47 item 1).

Since issue 47 every source range-checks its numbers at ingest (:mod:`brainlab.spec.ranges`),
so no new row holds INT64_MIN tokens, an infinite cost or a year-50,000 time. A store an
older release filled may: one such row made ``usage daily`` exit 70 (an INT64 sum overflow)
for good. The first writer that opens such a store (any ``ingest``) runs :func:`repair`
once per set of ranges (a ``brainlab_meta`` key): each stored value outside its range
becomes an ``ingest_errors`` row naming its file and line and is set to NULL (a snapshot
whose own time is out of range is deleted, its time being NOT NULL), and the usage roll-up
is rebuilt. Read commands open the store read-only and cannot repair it: until an ingest
runs, a query that overflows is one ``Error:`` line saying to run one
(:func:`brainlab.store.connection.query_error`).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from brainlab.spec import ranges
from brainlab.store import trend_scan

if TYPE_CHECKING:
    import duckdb

META_KEY = "ranges_checked"
_TOKENS = ranges.TOKENS
# table -> (ingest_errors source, {number column: range}, time columns, NOT NULL time column)
CHECKS: dict[str, tuple[str, dict[str, ranges.Range], tuple[str, ...], str | None]] = {
    "cc_request_lines": ("claude", {
        "input_tokens": _TOKENS, "output_tokens": _TOKENS, "cache_creation_tokens": _TOKENS,
        "cache_creation_5m_tokens": _TOKENS, "cache_creation_1h_tokens": _TOKENS,
        "cache_read_tokens": _TOKENS, "reported_cost_usd": ranges.COST_USD}, ("ts",), None),
    "cc_compactions": ("claude", {"pre_tokens": _TOKENS}, ("ts",), None),
    "otel_events": ("otel", {
        "input_tokens": _TOKENS, "output_tokens": _TOKENS, "cache_read_tokens": _TOKENS,
        "cache_creation_tokens": _TOKENS, "pre_tokens": _TOKENS, "post_tokens": _TOKENS,
        "cost_usd": ranges.COST_USD, "duration_ms": ranges.DURATION_MS,
        "ttft_ms": ranges.DURATION_MS, "event_sequence": ranges.COUNT,
        "attempt": ranges.COUNT, "prompt_length": ranges.COUNT}, ("ts", "observed_ts"), None),
    "otel_metric_points": ("otel", {"value": ranges.METRIC_VALUE, "count": ranges.COUNT},
                           ("ts", "start_ts"), None),
    "otel_spans": ("otel", {
        "input_tokens": _TOKENS, "output_tokens": _TOKENS, "cache_read_tokens": _TOKENS,
        "cache_creation_tokens": _TOKENS, "ttft_ms": ranges.DURATION_MS},
        ("start_ts", "end_ts"), None),
    "limit_snapshots": ("limits", {
        "five_hour_pct": ranges.PERCENT, "seven_day_pct": ranges.PERCENT,
        "context_used_pct": ranges.PERCENT, "context_window_size": _TOKENS,
        "total_cost_usd": ranges.COST_USD, "total_input_tokens": ranges.SESSION_TOKENS,
        "total_output_tokens": ranges.SESSION_TOKENS},
        ("five_hour_resets_at", "seven_day_resets_at"), "snapshot_at"),
    "raw_metabolism_logs": ("metabolism", {
        "tokens_used": ranges.SESSION_TOKENS, "context_peak_pct": ranges.PERCENT,
        "context_at_close": ranges.PERCENT, "duration_min": ranges.MINUTES,
        "health_score": ranges.SCORE}, (), None),
}


def ranges_key() -> str:
    """What a repair depends on: the ranges and the tables checked (not the moving window)."""
    text = repr([(r.name, r.low, r.high) for r in ranges.ALL]) + repr(ranges.EARLIEST) \
        + repr(sorted((t, sorted(c), times) for t, (_, c, times, _) in CHECKS.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def repair(con: duckdb.DuckDBPyConnection) -> int:
    """Move out-of-range values to ``ingest_errors`` once per ranges key; the count moved."""
    stored = con.execute("SELECT value FROM brainlab_meta WHERE key = ?", [META_KEY]).fetchone()
    key = ranges_key()
    if stored is not None and stored[0] == key:
        return 0
    tables = {name for (name,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'"
        " AND database_name = current_database()").fetchall()}
    moved = 0
    con.execute("BEGIN TRANSACTION")
    try:
        for table, (source, numbers, times, required) in CHECKS.items():
            if table in tables:
                moved += _repair_table(con, table, source, numbers, times, required)
        if moved:  # rows left the trend inputs: the stored change points are stale
            trend_scan.inputs_changed(con)
        con.execute("INSERT OR REPLACE INTO brainlab_meta VALUES (?, ?)", [META_KEY, key])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    if moved:
        from brainlab.store import usage_rollup

        usage_rollup.invalidate(con)
        usage_rollup.refresh(con)
    return moved


def _repair_table(con, table: str, source: str, numbers: dict[str, ranges.Range],
                  times: tuple[str, ...], required: str | None) -> int:
    columns = {name for (name,) in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main'"
        " AND database_name = current_database() AND table_name = ?", [table]).fetchall()}
    file = "source_file" if "source_file" in columns else "NULL"
    line = "line" if "line" in columns else "NULL"
    first, last = ranges.EARLIEST, ranges.latest()
    resets_last = ranges.latest(days=ranges.RESETS_AHEAD_DAYS)
    moved = 0
    checks = [(c, f"NOT isfinite({c}::DOUBLE) OR {c}::DOUBLE < {float(r.low)!r}"
               f" OR {c}::DOUBLE > {float(r.high)!r}", f"{r.name} {r.low:g}..{r.high:g}")
              for c, r in numbers.items() if c in columns]
    for column in (*times, *([required] if required else [])):
        if column in columns:
            end = resets_last if column.endswith("resets_at") else last
            checks.append((column, f"{column} < TIMESTAMP '{first:%Y-%m-%d}' OR {column} >"
                           f" TIMESTAMP '{end:%Y-%m-%d %H:%M:%S}'", "the time window"))
    for column, bad, what in checks:
        where = f"{column} IS NOT NULL AND ({bad})"
        found = con.execute(
            f"INSERT INTO ingest_errors (file, line, reason, source, severity)"
            f" SELECT coalesce({file}, '{table}'), {line}, 'stored by an older brainlab: {column}"
            f" = ' || left({column}::VARCHAR, 40) || ' is outside {what} (spec/ranges.py):"
            f" value removed', ?, 'error' FROM {table} WHERE {where}", [source]).fetchone()[0]
        if not found:
            continue
        moved += found
        if column == required:
            con.execute(f"DELETE FROM {table} WHERE {where}")
        else:
            con.execute(f"UPDATE {table} SET {column} = NULL WHERE {where}")
    return moved
