"""Rate-limit use over time (issue 25): ``usage_limits`` for ``brainlab usage limits`` and the report.

The rows come from ``limit_snapshots`` (what the status line saw, loaded by the next
ingest); without snapshots the message says how to get them.
"""

from __future__ import annotations

from pathlib import Path

EMPTY = ("No rate-limit snapshots yet: the status line records them (brainlab hooks install),"
         " and the next ingest loads them (brainlab ingest claude).\n")


def limits_rows(db: str | Path, limit: int | None = None, since=None, until=None):
    """(column names, rows) of ``usage_limits``, newest windows first."""
    from brainlab.store.connection import rows

    where, params = [], []
    if since is not None:
        where.append("resets_at >= ?")
        params.append(since)
    if until is not None:
        where.append("window_start < ?")
        params.append(until)
    sql = ("SELECT window_kind, window_start, resets_at, peak_used_pct, last_used_pct,"
           " snapshots FROM usage_limits" + (" WHERE " + " AND ".join(where) if where else "")
           + " ORDER BY resets_at DESC, window_kind" + (f" LIMIT {int(limit)}" if limit else ""))
    return rows(db, sql, params)


def limits_text(db: str | Path, limit: int | None = 20) -> str:
    """The newest ``limit`` windows as a plain 80-column table (or why there is none)."""
    _names, found = limits_rows(db, limit)
    if not found:
        return EMPTY
    lines = [f"{'window':<6}  {'started (UTC)':<16}  {'resets (UTC)':<16}  {'peak':>5}"
             f"  {'last':>5}  {'snapshots':>9}"]
    for kind, start, resets, peak, last, count in found:
        lines.append(f"{kind:<6}  {start:%Y-%m-%d %H:%M}  {resets:%Y-%m-%d %H:%M}"
                     f"  {peak:>4.0f}%  {last:>4.0f}%  {count:>9,}")
    return "\n".join(lines) + "\n"


def limits_output(db: str | Path, limit: int | None = None, fmt: str = "text") -> str:
    """What ``brainlab usage limits`` prints: the table (``text``), or ``json`` / ``csv`` rows.

    ``limit`` is the newest N windows (default 20 for the table, every window otherwise).
    """
    if fmt == "text":
        return limits_text(db, limit or 20)
    from brainlab.common import tables

    names, found = limits_rows(db, limit)
    return (tables.to_json if fmt == "json" else tables.to_csv)(names, found) + (
        "\n" if fmt == "json" else "")


def limits_frame(db: str | Path, since=None, until=None):
    """``usage_limits`` rows overlapping [since, until) as a DataFrame (oldest first)."""
    import pandas as pd

    names, found = limits_rows(db, None, since, until)
    return pd.DataFrame(found, columns=names).iloc[::-1].reset_index(drop=True)
