"""Charts and controls for logged versus measured (issue 13, notebook 06).

DataFrames from :mod:`brainlab.metrics.audit` in, altair charts out; the disagreement flags
come from the SQL audit, never from here.
"""

from __future__ import annotations

from collections.abc import Callable

import altair as alt
import ipywidgets as w
import pandas as pd

from brainlab.viz import theme

WIDTH = 560
FLAG_COLORS = theme.scale("audit_flag")  # spec/colours.py: within green, disagrees red


def _flag(frame: pd.DataFrame) -> pd.Series:
    return frame["disagrees"].map({True: "disagrees", False: "within tolerance"}).fillna(
        "not compared")


def logged_vs_measured(audit: pd.DataFrame, field: str) -> alt.Chart:
    """One point per log: logged value (x) against measured value (y), y = x drawn."""
    rows = audit[audit["field"] == field].assign(flag=lambda f: _flag(f))
    points = alt.Chart(rows, width=WIDTH, title=f"{field}: logged against measured").mark_circle(
        size=45, opacity=0.8).encode(
        x=alt.X("logged_value:Q", title="logged"), y=alt.Y("measured_value:Q", title="measured"),
        color=alt.Color("flag:N", scale=FLAG_COLORS, title=None),
        tooltip=["sess_id", "type", "logged_value", "measured_value", "difference"])
    top = float(pd.concat([rows["logged_value"], rows["measured_value"]]).max() or 1.0)
    diagonal = alt.Chart(pd.DataFrame({"v": [0.0, top]})).mark_line(
        strokeDash=[4, 4], color="#777").encode(x="v:Q", y="v:Q")
    return diagonal + points


def disagreement_share(audit: pd.DataFrame) -> alt.Chart:
    """Per field, how many logs are within tolerance, disagree, or could not be compared."""
    rows = audit.assign(flag=lambda f: _flag(f))
    return alt.Chart(rows, width=WIDTH, title="Logs per field and verdict").mark_bar().encode(
        y=alt.Y("field:N", title=None), x=alt.X("count():Q", axis=theme.count_axis("logs")),
        color=alt.Color("flag:N", scale=FLAG_COLORS, title=None))


def ratio_by_basis(signals: pd.DataFrame, coach_ratio: float = 0.40) -> alt.Chart:
    """The rolling ratio (SPEC §3.3) under each basis, coach triggers marked."""
    rows = signals.dropna(subset=["ratio"])
    line = alt.Chart(rows, width=WIDTH, title="Rolling ratio by basis").mark_line(
        interpolate="step-after").encode(
        x=alt.X("started_at:T", title=None), y=alt.Y("ratio:Q", title="use / (build + 0.5 explore)"),
        color=alt.Color("basis:N"))
    coach = alt.Chart(rows[rows["coach_triggered"].fillna(False)]).mark_point(
        shape="triangle-up", size=60, filled=True).encode(
        x="started_at:T", y="ratio:Q", color="basis:N",
        tooltip=["sess_id:N", "coach_reason:N"])  # typed: an empty frame infers no type
    rule = alt.Chart(pd.DataFrame({"y": [coach_ratio]})).mark_rule(
        strokeDash=[2, 2], color="#d62728").encode(y="y:Q")
    return line + coach + rule


_STYLE = {"description_width": "initial"}  # labels whole, not cut at ipywidgets' default


def audit_panel(audit_for: Callable[[float], pd.DataFrame], fields: list[str],
                types: list[str], render: Callable[[pd.DataFrame, dict], None]):
    """Field, type and tolerance controls; each change re-reads the audit and calls ``render``.

    ``audit_for(tolerance_pct)`` returns the audit at that relative tolerance (the SQL decides
    the flags); ``render(rows, choices)`` draws the filtered rows. A
    :class:`brainlab.viz.widgets.Panel`: no Output widget (issue 44 item 4).
    """
    from brainlab.viz.widgets import Panel, watch

    field = w.Dropdown(options=fields, value=fields[0] if fields else None,
                       description="field", style=_STYLE)
    kind = w.SelectMultiple(options=types, value=(), description="types (none = all)",
                            style=_STYLE,
                            rows=min(6, max(2, len(types))))
    tolerance = w.IntSlider(value=10, min=0, max=60, step=5, description="tolerance %",
                            style=_STYLE)

    def draw() -> None:
        rows = audit_for(float(tolerance.value))
        if kind.value:
            rows = rows[rows["type"].isin(kind.value)]
        render(rows, {"field": field.value, "types": kind.value,
                      "tolerance_pct": tolerance.value})

    box = w.VBox([w.HBox([field, tolerance]), kind])
    return watch([field, kind, tolerance], Panel(box, draw))
