"""Logged versus measured (issue 13) as DataFrames.

The audit, its summaries, and the signals under each basis, so a notebook can show how
conclusions change with the basis.
"""

from __future__ import annotations

import pandas as pd

from brainlab.metrics.metabolism import BASES, DB, signals
from brainlab.spec.thresholds import Thresholds
from brainlab.store import query


def audit(db: DB, tolerance_pct: float = 10.0, pct_points: float = 5.0) -> pd.DataFrame:
    """session_audit_for at one relative tolerance (tokens, duration, health).

    ``pct_points``: the context-percent tolerance; rows carry the log's type and category.
    """
    rel = tolerance_pct / 100.0
    return query(db, """
        SELECT a.*, s.type, s.category
        FROM session_audit_for(tokens_rel := ?, duration_rel := ?, health_rel := ?,
                               pct_points := ?) a
        LEFT JOIN stg_metabolism_sessions s USING (sess_id)
        ORDER BY a.started_at, a.sess_id, a.field""", [rel, rel, rel, pct_points])


def audit_summary(db: DB) -> pd.DataFrame:
    """Per field: logs compared, share within tolerance, median differences (SPEC defaults).

    The share within tolerance carries its 95% Wilson interval (``within_low``,
    ``within_high``; issue 43: every share with its n and interval).
    """
    from brainlab.metrics.intervals import wilson

    frame = query(db, "SELECT * FROM session_audit_summary ORDER BY field")
    bounds = [wilson(int(k), int(n)) for k, n in zip(frame["within_tolerance"],
                                                     frame["logs_compared"], strict=True)]
    at = frame.columns.get_loc("share_within_tolerance") + 1
    frame.insert(at, "within_high", [b.high for b in bounds])
    frame.insert(at, "within_low", [b.low for b in bounds])
    return frame


def match_summary(db: DB) -> dict:
    """Logs matched / ambiguous / unmatched and transcripts without a log."""
    return query(db, "SELECT * FROM session_match_summary").iloc[0].to_dict()


def signals_by_basis(db: DB, thresholds: Thresholds | None = None,
                     bases=BASES) -> pd.DataFrame:
    """session_signals_for under each basis, stacked with a ``basis`` column."""
    frames = [signals(db, thresholds, basis=b).assign(basis=b) for b in bases]
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["basis", "started_at", "ratio", "coach_triggered", "health_score"])
