"""The store's side of the live commands, written to ``digest.json`` after an ingest.

The status line never opens the store (a writer may hold it, and opening DuckDB costs more
than the whole line's budget); the hook's ingest and ``hook session-start`` read the store
read-only once and leave here what the line and the boot context need, each value the
result of the existing views (DESIGN §3: Python wraps views, it does not recompute them):

- ``day`` and ``sessions``: today's cost (UTC day) per session, summed by ``usage_by`` (the
  one place usage is summed) over the usage roll-up (``cc_usage_rollup``);
- ``coach``: the SPEC §3.3 coach auto-trigger of the latest session (``session_signals_for``
  under the settings' thresholds);
- ``breath``: the SPEC §4.4 alerts of the running sprint (a sprint without an end, or that
  ended in the last 12 hours: :func:`brainlab.metrics.report.sprint_breath`);
- ``cold_start``: the SPEC §3.3 cold-start KPI when not stable (``cold_start_kpi``);
- ``claims``: open claims not past their TTL, and stale ones (``claim_status_at``).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from brainlab.live import cache


def build(db: str | Path, now: float | None = None) -> dict:
    """Read the digest's values from the store at ``db`` (read-only; each part may be None)."""
    from brainlab.store.connection import reader

    with reader(db, engine_only=True) as con:
        out, running = collect(con, now)
    return with_breath(out, db, running)


def collect(con, now: float | None = None) -> tuple[dict, tuple | None]:
    """The digest's values read on ``con`` (a reader, or the ingest's own writer).

    A writer is sealed here first (external access off, settings locked: issue 46), and a
    query over a view that fails (a view reading a file) is a StoreError.

    Also returns the running sprint (id, start), whose breath :func:`with_breath` adds once
    ``con`` is closed (the report's function opens the store itself).
    """
    from brainlab.common.errors import StoreError
    from brainlab.common.plaintext import visible
    from brainlab.store.connection import engine, seal_writer

    seal_writer(con)  # the hook's worker passes its writer: sealed as a reader (issue 46)
    now = time.time() if now is None else now
    day = time.strftime("%Y-%m-%d", time.gmtime(now))
    out: dict = {"built_at": round(now, 3), "day": day, "sessions": {}, "coach": None,
                 "breath": None, "cold_start": None, "claims": None}

    def one(sql, params=()):
        try:
            return con.execute(sql, list(params)).fetchall()
        except engine().Error as exc:  # a view that reads a file: refused by the seal
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise StoreError(f"digest not built: a query over the store's views failed"
                             f" ({visible(first)})") from None

    out["sessions"] = {sid: float(cost) for sid, cost in one(
        "SELECT session_id, cost_usd FROM usage_by(calls := cc_usage_rollup, grain := 'day',"
        " dims := ['session'], since := ?, until := ?) WHERE session_id IS NOT NULL",
        [day, day]) if cost}
    names, values = _thresholds().signal_arguments()  # the settings' [thresholds]
    coach = one(f"SELECT sess_id, coach_reason FROM session_signals_for({names})"
                " ORDER BY started_at DESC, sess_id DESC LIMIT 1", values)
    if coach and coach[0][1]:
        out["coach"] = f"coach ({coach[0][1]})"
    kpi = one("SELECT status, pass_rate FROM cold_start_kpi"
              " ORDER BY started_at DESC, sess_id DESC LIMIT 1")
    if kpi and kpi[0][0] != "stable":
        out["cold_start"] = f"cold-start KPI {kpi[0][1]:.0%}: {kpi[0][0]}"
    at = datetime.fromtimestamp(now, UTC).replace(tzinfo=None)
    claims = one("SELECT count(*) FILTER (WHERE status = 'open' AND NOT is_stale),"
                 " count(*) FILTER (WHERE is_stale) FROM claim_status_at(?)", [at])
    if claims and (claims[0][0] or claims[0][1]):
        out["claims"] = {"open": claims[0][0], "stale": claims[0][1]}
    running = one("SELECT sprint_id, min(started_at) FROM sprints GROUP BY sprint_id"
                  " HAVING max(ended_at) IS NULL OR max(ended_at) > ?"
                  " ORDER BY min(started_at) DESC LIMIT 1", [at - timedelta(hours=12)])
    return out, (running[0] if running and running[0][1] is not None else None)


def _thresholds():
    """The process's thresholds, the SPEC's when nothing is set.

    :func:`brainlab.settings.current`: the hook's worker gets the hook's in
    ``$BRAINLAB_SETTINGS``.
    """
    from brainlab.common.paths import config_requested
    from brainlab.spec.thresholds import Thresholds

    if not config_requested():
        return Thresholds()
    from brainlab.settings import current

    return current().thresholds


def with_breath(out: dict, db: str | Path, running: tuple | None) -> dict:
    """``out`` with the running sprint's breath alert (read through the report's function)."""
    if running is not None:
        out["breath"] = _breath(db, running[0], running[1])
    return out


def _breath(db, sprint_id: str, started_at: datetime) -> str | None:
    """The running sprint's SPEC §4.4 alerts as the weekly report computes them."""
    from brainlab.metrics.report import Week, sprint_breath

    frame = sprint_breath(db, Week.of(started_at.date()), _thresholds())  # SPEC §4.4 ones
    if frame is None or frame.empty:
        return None
    alerts = frame.loc[frame["sprint_id"] == sprint_id, "alerts"]
    return f"breath: {alerts.iloc[0]}" if len(alerts) and alerts.iloc[0] else None


def refresh(db: str | Path) -> dict | None:
    """Build the digest and write it atomically; None (and a log line) when the store is busy."""
    from brainlab.common.errors import BrainlabError

    try:
        value = build(db)
    except BrainlabError as exc:
        cache.log(f"digest: not refreshed: {exc}")
        return None
    return write(value)


def write(value: dict) -> dict:
    """Write the digest atomically; return it."""
    cache.write_json(cache.file(cache.DIGEST_NAME), value)
    return value
