"""Where and when the stored change points are refreshed, and when they are stale (issue 43).

The change points of every trend series are found in Python (ruptures' PELT,
:func:`brainlab.metrics.trends.scan`), so their result is stored in ``trend_change_scan`` and
SQL reads it through the view ``trend_changes``. Every trend series can move when any of
its inputs does: on basis best (the scan's) a transcript lends its measured tokens, type and
mode to health, ratio, category shares, coach triggers and tokens per session; calls and
telemetry give cost per session; transcripts beside logs give the measured - logged gap;
prices give cost. A brain ingest rescans at once; ``ingest claude``, ``ingest otel`` (and
the hooks that run them) must not import pandas (issue 12, docs/live.md), so they rescan
nothing. The scan records the store state it saw instead, and the views compare:

- ``brainlab_meta['trend_inputs']`` (:data:`INPUTS_KEY`) counts the writes to the scan's
  inputs: every writer of them bumps it (:func:`inputs_changed`) in a transaction that
  commits before, or with, its rows (a writer killed half-way leaves it bumped);
- ``brainlab_meta['trend_change_scan']`` (:data:`SCAN_KEY`) holds the count the stored scan
  read before it started (:func:`write`, in the transaction that replaces the rows);
- the view ``trend_changes_status`` says current, stale or not scanned, with what to run;
  ``trend_changes`` shows the stored rows only while they are current, never old ones.

A writer that bumps the count while a scan runs leaves that scan stale (it saw the count
before the write): a race costs a rescan, never old change points shown as current. The
next ``ingest brain|sprints|circuits`` rescans a stale store even when it changed nothing,
and ``brainlab trends --refresh`` rescans on demand.

The scan also depends on the thresholds (coach triggers, the ratio's window): it stores the
set it used (``brainlab_meta['trend_change_thresholds']``, :data:`THRESHOLDS_KEY`), and a
reader that passes its settings' thresholds to :func:`status` is told stale when they differ
(a ``[thresholds]`` edit after the scan), so the next brain ingest rescans with the new set.
A view cannot know a process's settings: SQL readers see the stored set in brainlab_meta.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

    from brainlab.spec.thresholds import Thresholds

INPUTS_KEY = "trend_inputs"  # writes to the scan's inputs so far (a count; absent: 0)
SCAN_KEY = "trend_change_scan"  # the INPUTS_KEY count the stored scan read
THRESHOLDS_KEY = "trend_change_thresholds"  # the thresholds the stored scan used (JSON)
REFRESH = "brainlab trends --refresh"  # what rescans (the views' status names it too)


def inputs_changed(con: duckdb.DuckDBPyConnection) -> None:
    """Count one more write to the trend inputs: the stored change points are stale.

    Call it before writing rows (autocommit: committed at once, so a kill after it leaves the
    scan stale) or inside the writing transaction. One statement on brainlab_meta: the hooks'
    ingest pays nothing more (no pandas, no scan).
    """
    # an UPDATE plans in a third of an INSERT OR REPLACE ... SELECT max() (0.8 against 2.4 ms)
    updated = con.execute("UPDATE brainlab_meta SET value = CAST(coalesce(TRY_CAST(value AS"
                          " BIGINT), 0) + 1 AS VARCHAR) WHERE key = ?", [INPUTS_KEY]).fetchone()
    if not updated or not updated[0]:  # the store's first counted write
        con.execute("INSERT INTO brainlab_meta VALUES (?, '1')", [INPUTS_KEY])


def inputs_seen(db: str | os.PathLike) -> int:
    """The count of writes to the trend inputs now (read before a scan starts)."""
    from brainlab.store.connection import rows

    _names, found = rows(db, "SELECT coalesce(max(TRY_CAST(value AS BIGINT)), 0)"
                             " FROM brainlab_meta WHERE key = ?", [INPUTS_KEY])
    return int(found[0][0])


def thresholds_text(thresholds: Thresholds) -> str:
    """The set as stored beside the scan: every field, sorted, as JSON."""
    return json.dumps(asdict(thresholds), sort_keys=True)


def write(con: duckdb.DuckDBPyConnection, found: pd.DataFrame, seen: int,
          thresholds: Thresholds) -> None:
    """Replace the stored change points with ``found``, scanned at ``seen``; one transaction.

    ``found`` has trend_change_scan's columns but ``scanned_at``; ``seen`` is
    :func:`inputs_seen` read before the scan started; ``thresholds`` the set the scan used
    (stored for :func:`status`). Rows, the count they saw and the set are
    written together: a kill leaves the old scan and its count. ``con`` (a writer) is sealed
    first (external access off, issue 46).
    """
    from brainlab.store.connection import seal_writer

    seal_writer(con)
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM trend_change_scan")
        if not found.empty:
            frame = found.astype({"before": float, "after": float})
            con.register("found_changes", frame)
            con.execute("INSERT INTO trend_change_scan BY NAME SELECT *, "
                        "now()::TIMESTAMP AS scanned_at FROM found_changes")
            con.unregister("found_changes")
        con.execute("INSERT OR REPLACE INTO brainlab_meta VALUES (?, ?)", [SCAN_KEY, str(seen)])
        con.execute("INSERT OR REPLACE INTO brainlab_meta VALUES (?, ?)",
                    [THRESHOLDS_KEY, thresholds_text(thresholds)])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


@dataclass(frozen=True)
class Status:
    """The stored change points' state: ``state`` is current, stale or not scanned."""

    state: str
    scanned_at: str | None  # when the stored scan ran (UTC), None when no scan is stored
    changes: int  # change points stored (shown by trend_changes only when current)
    message: str  # one line: what it means and what to run

    @property
    def current(self) -> bool:
        """Whether ``trend_changes`` shows the stored rows."""
        return self.state == "current"


def status(db: str | os.PathLike, thresholds: Thresholds | None = None) -> Status:
    """The view ``trend_changes_status``'s one row, stale too for other ``thresholds``.

    ``thresholds`` are the reader's settings: when they differ from the set the stored scan
    used, the scan is stale for this reader. A scan stored without its set (before stop 28)
    cannot be compared and keeps its state.
    """
    from brainlab.store.connection import rows

    _names, found = rows(db, "SELECT state, CAST(scanned_at AS VARCHAR), changes, message,"
                             " (SELECT max(value) FROM brainlab_meta WHERE key = ?)"
                             " FROM trend_changes_status", [THRESHOLDS_KEY])
    state, scanned_at, changes, message, used = found[0]
    if state == "current" and thresholds is not None and used is not None:
        changed = _changed_fields(json.loads(used), asdict(thresholds))
        if changed:
            state = "stale"
            message = (f"stale: scanned with other thresholds than the settings' ({changed});"
                       f" trend_changes shows that scan until `{REFRESH}` or the next"
                       " `brainlab ingest brain` rescans")
    return Status(state, scanned_at, int(changes), message)


def _changed_fields(used: dict, now: dict) -> str:
    """``coach_ratio 0.4 then, 0.3 now; ...`` for the fields that differ ('' when none)."""
    return "; ".join(f"{name} {used.get(name)!r} then, {value!r} now"
                     for name, value in sorted(now.items()) if used.get(name) != value)


def is_stale(db: str | os.PathLike, thresholds: Thresholds | None = None) -> bool:
    """True when the stored scan is not current for a reader with ``thresholds``.

    Stale, never run on a store with rows, or scanned with other thresholds.
    """
    return not status(db, thresholds).current
