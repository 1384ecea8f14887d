"""Charts of the trend series (issue 43): points with intervals, gaps, change points, agents.

DataFrames in (computed by :mod:`brainlab.metrics.trends`), altair charts out; no metric is
computed here. Every line breaks at a period without data (:func:`charts.runs`), every
point carries its 95% interval, every mark has its legend.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from brainlab.viz import theme
from brainlab.viz.charts import runs

_DATES = ("period_start", "week_start")  # plain dates: the charts read the labels


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=[c for c in _DATES if c in frame])


def series_with_changes(points: pd.DataFrame, found: pd.DataFrame, series: str,
                        title: str | None = None) -> alt.LayerChart:
    """One weekly series: points, intervals, gaps and change points.

    A gap where a week has no data, and a dashed rule at each change point of ``found``
    (labelled by direction in the legend).
    """
    pts = _plain(points[points["series"] == series]).rename(columns={"period": "iso_week"})
    order = pts["iso_week"].tolist()
    data = runs(pts.assign(key=series), "key", "value", order)
    x = alt.X("iso_week:O", title="week", scale=alt.Scale(domain=order),
              axis=alt.Axis(labelAngle=-40))
    line = alt.Chart(data).mark_line(point=True, color=theme.CATEGORY_COLORS["use-brain"]
                                     ).encode(x=x, y=alt.Y("value:Q", title=series),
                                              detail="run:N",
                                              tooltip=["iso_week", "n", "value", "low", "high"])
    bars = alt.Chart(data.dropna(subset=["low"])).mark_rule(
        color=theme.CATEGORY_COLORS["use-brain"], opacity=0.5).encode(x=x, y="low:Q",
                                                                      y2="high:Q")
    mine = found[found["series"] == series].assign(
        mark=lambda f: "change point (" + f["direction"] + ")")
    rules = alt.Chart(mine.rename(columns={"period": "iso_week"})).mark_rule(
        strokeDash=[5, 3], size=2).encode(
        x=x, color=alt.Color("mark:N", title=None, scale=alt.Scale(
            domain=["change point (up)", "change point (down)"],
            range=[theme.ALERT, theme.MUTED])))
    return alt.layer(bars, line, rules).properties(
        width=theme.WIDTH, height=180,
        title=title or f"{series}: weekly mean, 95% interval, change points")


def agents_indexed(frame: pd.DataFrame) -> alt.Chart:
    """Each agent's tokens per session indexed to its own first loaded week (= 100).

    One small panel per agent, so a small agent's change is as visible as helloWorld's.
    """
    data = runs(_plain(frame), "agent", "index",
                sorted(frame["iso_week"].unique()))
    return alt.Chart(data).mark_line(point=True).encode(
        x=alt.X("iso_week:O", title=None, axis=alt.Axis(labelAngle=-60)),
        y=alt.Y("index:Q", title="index (first loaded week = 100)"),
        detail="run:N", tooltip=["agent", "iso_week", "n", "tokens", "index"],
    ).properties(width=180, height=110).facet(
        facet=alt.Facet("agent:N", title=None), columns=3,
        title="Agent load cost per session, indexed to each agent's first loaded week")


def projects(frame: pd.DataFrame) -> alt.Chart:
    """Small multiples: each project's weekly series (rows: series, columns: projects)."""
    data = runs(_plain(frame).rename(columns={"period": "iso_week"}).assign(
        key=lambda f: f["project"] + "|" + f["series"]), "key", "value",
        sorted(frame["period"].unique()))
    return alt.Chart(data).mark_line(point=True).encode(
        x=alt.X("iso_week:O", title=None, axis=alt.Axis(labelAngle=-60)),
        y=alt.Y("value:Q", title=None), detail="run:N",
        tooltip=["project", "series", "iso_week", "n", "value", "low", "high"],
    ).properties(width=170, height=110).facet(
        row=alt.Row("series:N", title=None), column=alt.Column("project:N", title=None),
    ).resolve_scale(y="independent").properties(
        title="Per project: weekly mean with n in the tooltip (a gap: no session)")
