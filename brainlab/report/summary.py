"""The week's figures the reports' index shows (``summary.json``), computed by the render.

The notebook's last cell (``sections.finish``) computes them on the render's own connection,
where the week's views are already materialized (:mod:`brainlab.report.once`), and displays
them as one output of type :data:`MIME`; the page leaves that output out
(:mod:`brainlab.report.html`) and ``weekly.py`` writes it to ``summary.json``. The parent
process used to open the store again for them (~0.4 CPU-s a week, issue 28 item 8). A
notebook without that output (an older or a custom one) gets them from the store, by the
same function.
"""

from __future__ import annotations

import json
import math

from brainlab.settings import Thresholds
from brainlab.spec.weeks import Week

MIME = "application/vnd.brainlab.summary+json"
QUERY = object()  # figures(current=QUERY): the caller does not hold the week's row


def figures(db, week: Week, thresholds: Thresholds, basis: str = "best",
            current: dict | None | object = QUERY, tz: str = "UTC") -> dict:
    """The week's headline figures, the change of its mean health, its Claude Code figures.

    ``current``: the week's ``weekly_health_for`` row (None: the week has none) when the
    caller holds it already;
    ``tz``: the zone whose days make the week of the Claude Code figures (``--timezone``).
    Values are plain JSON (numpy scalars unwrapped, NaN as None).
    """
    from brainlab.metrics import report as data
    from brainlab.report import measured_week

    found = (data.week_figures(db, week, thresholds, basis=basis) if current is QUERY
             else current)
    previous = data.week_figures(db, week.shifted(-1), thresholds, basis=basis) or {}
    clean = {k: plain(v) for k, v in (found or {"sessions": 0}).items()
             if k not in ("iso_week", "week_start")}
    cur, prev = clean.get("mean_health"), plain(previous.get("mean_health"))
    clean["mean_health_change"] = (cur - prev) if cur is not None and prev is not None else None
    return {**clean, **measured_week.transcript_figures(db, week, tz)}


def show(found: dict) -> None:
    """Display ``found`` as the cell's output of type :data:`MIME` (read by the renderer)."""
    from IPython.display import display

    # a notebook stores a JSON output's keys sorted: their order goes in its metadata
    display({MIME: found}, metadata={MIME: {"keys": list(found)}}, raw=True)


def from_notebook(notebook) -> dict | None:
    """The figures an executed notebook displayed with :func:`show`, or None."""
    for cell in reversed(notebook.cells):
        for output in cell.get("outputs", []):
            if MIME in output.get("data", {}):
                found = output["data"][MIME]
                found = dict(json.loads(found) if isinstance(found, str) else found)
                keys = output.get("metadata", {}).get(MIME, {}).get("keys", [])
                return {**{k: found[k] for k in keys if k in found}, **found}
    return None


def plain(value):
    """A figure as plain JSON: numpy scalars unwrapped, NaN as None, others as text."""
    if value is None:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    try:
        json.dumps(value)
    except TypeError:
        return str(value)
    return value
