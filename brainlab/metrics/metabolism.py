"""Metabolism metrics (SPEC §3) and hygiene (SPEC §2.5, §2.6, §5) as DataFrames.

Each function maps to one view or table macro; ``thresholds`` defaults to the SPEC values.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from datetime import datetime

import pandas as pd

from brainlab.common.errors import ConfigError
from brainlab.spec.thresholds import Thresholds
from brainlab.store import query

DB = str | os.PathLike
FORMULAS = ("v2", "v1", "logged")
BASES = ("best", "logged", "measured")  # issue 13: which side of a session every metric reads


def _formula(formula: str) -> str:
    if formula not in FORMULAS:
        raise ConfigError(f"unknown health formula {formula!r}; choose one of {FORMULAS}")
    return formula


def basis_of(basis: str) -> str:
    """Check a basis name: best (measured where a transcript exists), logged or measured."""
    if basis not in BASES:
        raise ConfigError(f"unknown basis {basis!r}; choose one of {BASES}")
    return basis


def sessions(db: DB, formula: str = "v2", thresholds: Thresholds | None = None,
             basis: str = "best") -> pd.DataFrame:
    """One row per session with health recomputed by ``formula`` (SPEC §3.2) beside the logged one."""
    t = thresholds or Thresholds()
    return query(db, "SELECT * FROM scored_sessions(formula := ?, saturation_peak_use := ?, "
                     "saturation_peak_build := ?, basis := ?) ORDER BY started_at, sess_id",
                 [_formula(formula), t.saturation_peak_use, t.saturation_peak_build,
                  basis_of(basis)])


def ratio(db: DB, thresholds: Thresholds | None = None) -> pd.DataFrame:
    """The rolling use/build ratio at every session (SPEC §3.3), window from ``thresholds``."""
    t = thresholds or Thresholds()
    return query(db, "SELECT * FROM session_ratio(window_size := ?, unit := ?, "
                     "explore_weight := ?, healthy := ?, watch := ?) ORDER BY started_at",
                 [t.ratio_window, t.ratio_window_unit, t.ratio_explore_weight, t.ratio_healthy,
                  t.ratio_watch])


def signals(db: DB, thresholds: Thresholds | None = None, formula: str = "v2",
            basis: str = "best", columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Per session: coach trigger, conserve signals, ratio band (SPEC §3.3) under ``thresholds``.

    ``columns``: only these columns of ``session_signals_for`` (default: all), for a caller
    reading a few of them many times (the tuning sweep: ~15 % less CPU a query, the frame
    built from 5 columns instead of all; benchmarks/bench_tune_columns.py).
    """
    t = thresholds or Thresholds()
    names, values = t.signal_arguments()  # spec/thresholds.py: the one parameter list
    chosen = "*" if columns is None else ", ".join(_column(c) for c in columns)
    return query(db, f"SELECT {chosen} FROM session_signals_for(formula := ?, {names},"
                     " basis := ?) ORDER BY started_at, sess_id",
                 [_formula(formula), *values, basis_of(basis)])


def _column(name: str) -> str:
    """A column name, checked before it goes into the SQL text (lower-case identifiers only)."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ValueError(f"not a column name: {name!r}")
    return name


def weekly_health(db: DB, thresholds: Thresholds | None = None) -> pd.DataFrame:
    """Headline figures per ISO week (view ``weekly_health``) under ``thresholds``.

    None: the SPEC defaults (the view itself); else ``weekly_health_for`` with the set.
    """
    if thresholds is None or thresholds == Thresholds():
        return query(db, "SELECT * FROM weekly_health ORDER BY week_start")
    names, values = thresholds.signal_arguments()
    return query(db, "SELECT * EXCLUDE (last_ratio, last_ratio_band)"
                     f" FROM weekly_health_for({names}) ORDER BY week_start", values)


def cold_start(db: DB, thresholds: Thresholds | None = None) -> pd.DataFrame:
    """Cold-start KPI pass rate over the last N measured sessions (SPEC §3.3)."""
    t = thresholds or Thresholds()
    return query(db, "SELECT * FROM cold_start_kpi_for(window_size := ?, stable := ?, watch := ?)"
                     " ORDER BY started_at",
                 [t.cold_start_window, t.cold_start_stable, t.cold_start_watch])


def agent_cost(db: DB, thresholds: Thresholds | None = None) -> pd.DataFrame:
    """Per-agent loads, share of sessions, tokens and use (SPEC §2.5), costliest first."""
    t = thresholds or Thresholds()
    return query(db, "SELECT * FROM agent_cost_for(always_loaded_share := ?, "
                     "little_use_share := ?) ORDER BY tokens_total DESC, agent",
                 [t.always_loaded_share, t.little_use_share])


def claim_status(db: DB, as_of: datetime | None = None) -> pd.DataFrame:
    """Every claim with its TTL, expiry and staleness as of ``as_of`` (default: now) (SPEC §2.6)."""
    return query(db, "SELECT * FROM claim_status_at(CAST(? AS TIMESTAMP)) ORDER BY opened_at",
                 [as_of or datetime.now()])


def workspace_violations(db: DB) -> pd.DataFrame:
    """One row per SPEC §5 workspace rule broken."""
    return query(db, "SELECT * FROM workspace_violations ORDER BY workspace, rule, line")
