"""Tuning's scoring, at the bottom of the tuning package: alerts per week, precision, recall.

Every kind of tuning (session thresholds, regulator limits, breath alerts) scores a frame of
alerts against labels with :func:`score` and ranks a sweep with :func:`recommend`. The metric
columns are declared here, the ticket columns as their own list (``bad_tickets`` in place of
``bad_sessions``), so no module derives another's columns.
"""

from __future__ import annotations

import math
import os

import pandas as pd

from brainlab.common.errors import ConfigError, SimulationError

DB = str | os.PathLike

METRIC_COLUMNS = ["weeks", "alerts", "alerts_per_week", "labelled_alerts", "true_positives",
                  "false_positives", "false_negatives", "bad_sessions", "precision", "recall"]
# the same measures per ticket (SPEC §6.6 labels): bad_tickets counts the bad tickets
TICKET_METRIC_COLUMNS = ["weeks", "alerts", "alerts_per_week", "labelled_alerts",
                         "true_positives", "false_positives", "false_negatives", "bad_tickets",
                         "precision", "recall"]


def score(frame: pd.DataFrame) -> dict:
    """Alerts per week, precision and recall of a :func:`label_alerts` frame (see module doc)."""
    if frame.empty:
        weeks = 0
    else:
        starts = pd.to_datetime(frame["week_start"])
        weeks = int((starts.max() - starts.min()).days // 7 + 1)
    alert = frame["is_alert"].astype(bool)
    labelled = frame["is_bad"].notna()
    bad = labelled & frame["is_bad"].fillna(False).astype(bool)
    tp = int((alert & bad).sum())
    fp = int((alert & labelled & ~bad).sum())
    fn = int((~alert & bad).sum())
    alerts = int(alert.sum())
    return {
        "weeks": weeks,
        "alerts": alerts,
        "alerts_per_week": alerts / weeks if weeks else math.nan,
        "labelled_alerts": tp + fp,
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
        "bad_sessions": int(bad.sum()),
        "precision": tp / (tp + fp) if tp + fp else math.nan,
        "recall": tp / (tp + fn) if tp + fn else math.nan,
    }


def recommend(sweep_result: pd.DataFrame, alerts_per_week_budget: float) -> pd.Series:
    """Pick the best row under the budget: max recall, then max precision, then fewest alerts.

    An in-sample ranking of a sweep (every week fitted and judged at once): for exploring.
    Whether a change should be made is ``brainlab tune`` (each module's ``tune``), judged on
    held-out weeks with intervals.

    Ties left after that keep the grid's order (the first row wins). Rows with NaN recall or
    precision rank below any number. Raises SimulationError when no row fits the budget.
    """
    if "recall" not in sweep_result.columns:
        raise ConfigError("this sweep has no outcome labels (breath alerts are scored by "
                          "volume only): nothing to rank by recall")
    if sweep_result.empty:
        raise SimulationError("empty sweep: nothing to recommend")
    fits = sweep_result[sweep_result["alerts_per_week"] <= alerts_per_week_budget]
    if fits.empty:
        lowest = sweep_result["alerts_per_week"].min()
        raise SimulationError(f"no threshold set stays within {alerts_per_week_budget} alerts "
                              f"per week (the lowest in this sweep is {lowest:.2f})")
    ranked = fits.assign(_order=range(len(fits)),
                         _recall=fits["recall"].fillna(-1.0),
                         _precision=fits["precision"].fillna(-1.0))
    ranked = ranked.sort_values(["_recall", "_precision", "alerts_per_week", "_order"],
                                ascending=[False, False, True, True], kind="stable")
    return ranked.drop(columns=["_order", "_recall", "_precision"]).iloc[0]
