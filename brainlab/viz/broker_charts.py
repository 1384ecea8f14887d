"""Altair charts for broker replays (notebooks/02): they draw ReplayResult frames, no metrics."""

from __future__ import annotations

import altair as alt
import pandas as pd

from brainlab.viz import theme


def frontier(summary: pd.DataFrame) -> alt.Chart:
    """Tokens versus miss rate, one point per policy (lower-left is better)."""
    data = summary[["policy", "tokens_total", "miss_rate", "waste_rate", "alerts_fired"]].copy()
    data["policy"] = data["policy"].astype(str)
    points = alt.Chart(data).mark_circle(size=120).encode(
        x=alt.X("miss_rate:Q", title="miss rate (referenced, not preloaded)",
                axis=alt.Axis(format="%")),
        y=alt.Y("tokens_total:Q", title="tokens (loaded + read on demand)"),
        color=alt.Color("policy:N"),
        tooltip=["policy", "tokens_total", alt.Tooltip("miss_rate:Q", format=".1%"),
                 alt.Tooltip("waste_rate:Q", format=".1%"), "alerts_fired"])
    # no text labels: policies a few percent apart overprinted them; the legend names each colour
    return points.properties(title="Policies: tokens versus miss rate", width=420)


def breath_over_sprints(sprints: pd.DataFrame, metric: str = "breath_depth") -> alt.Chart:
    """A SPEC §4.4 breath metric per sprint and policy, accumulation alerts marked."""
    data = sprints.copy()
    data["policy"] = data["policy"].astype(str)
    data["sprint_number"] = data.groupby("policy").cumcount() + 1
    base = alt.Chart(data).encode(
        x=alt.X("sprint_number:Q", title="sprint (replay order)"),
        y=alt.Y(f"{metric}:Q", title=metric), color="policy:N",
        tooltip=["sprint_id", "project", "policy", metric])
    alerts = base.mark_point(shape="triangle-up", size=80, filled=True).transform_filter(
        alt.datum.alert_accumulation)
    return (base.mark_line(opacity=0.7) + alerts).properties(
        title=f"{metric} over sprints (triangles: rising over consecutive sprints)", width=520)


def most_missed(files: pd.DataFrame, top: int = 12) -> alt.Chart:
    """The files most often missed (referenced but not preloaded), per policy."""
    data = files.copy()
    data["policy"] = data["policy"].astype(str)
    keep = data.groupby("path")["misses"].sum().nlargest(top).index
    data = data[data["path"].isin(keep)]
    data["file"] = data["path"].map(lambda p: theme.cut_middle(p, 48))  # the file name stays
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("misses:Q", axis=theme.count_axis("misses")),
        y=alt.Y("file:N", sort="-x", title=None, axis=alt.Axis(labelLimit=0)),
        color="policy:N", yOffset="policy:N",
        tooltip=["project", "path", "policy", "misses", "hits", "waste"],
    ).properties(title=f"The {top} files most often missed", width=420)
