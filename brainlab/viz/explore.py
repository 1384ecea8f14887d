"""Altair chart builders for the exploration notebooks (01 trends, 04 tuning, 05 tour).

DataFrames in (from brainlab.metrics / brainlab.sim.tuning), charts out: no chart computes a
metric; the only transforms here are filtering rows, bucketing by week and the plotting
aggregates (mean, sum) altair applies. Default altair theme (the report's theme, when present,
is applied by :func:`use_theme`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import altair as alt
import pandas as pd

from brainlab.sim.tuning.scoring import METRIC_COLUMNS
from brainlab.spec import colours
from brainlab.spec.thresholds import Thresholds
from brainlab.viz import theme

CATEGORY_COLORS = colours.CATEGORY  # one table for notebooks and report (spec/colours.py)
BAND_COLORS = colours.RATIO_BAND  # drawn pale (opacity) behind the ratio line
WIDTH = 620


def use_theme() -> str:
    """Enable brainlab's report theme when the package has one, else keep altair's default."""
    try:
        from brainlab.viz import theme  # noqa: F401  (written on the report branch)
    except ImportError:
        return "default"
    enable = getattr(theme, "enable", None)
    if callable(enable):
        enable()
        return "brainlab"
    return "default"


def _category_scale() -> alt.Scale:
    return alt.Scale(domain=list(CATEGORY_COLORS), range=list(CATEGORY_COLORS.values()))


def week_start(values: pd.Series) -> pd.Series:
    """Monday of each timestamp's ISO week (the bucket weekly_health uses)."""
    stamps = pd.to_datetime(values)
    return (stamps - pd.to_timedelta(stamps.dt.weekday, unit="D")).dt.normalize()


def filter_sessions(frame: pd.DataFrame, start=None, end=None,
                    types: Iterable[str] | None = None,
                    projects: Iterable[str] | None = None) -> pd.DataFrame:
    """Keep sessions started in [start, end] (dates, inclusive) of the given types and projects.

    ``types`` / ``projects`` None or empty = no filter; the project "(none)" matches sessions
    without a project.
    """
    keep = pd.Series(True, index=frame.index)
    started = pd.to_datetime(frame["started_at"])
    if start is not None:
        keep &= started >= pd.Timestamp(start)
    if end is not None:
        keep &= started < pd.Timestamp(end) + pd.Timedelta(days=1)
    if types:
        keep &= frame["type"].isin(list(types))
    if projects and "project" in frame:
        wanted = list(projects)
        keep &= frame["project"].fillna("(none)").isin(wanted)
    return frame[keep]


def health_by_category(sessions: pd.DataFrame) -> alt.Chart:
    """Weekly mean health score (SPEC §3.2 v2) per category, with sessions in the tooltip."""
    data = sessions[sessions["health_score"].notna()].assign(
        week=lambda f: week_start(f["started_at"]))[["week", "category", "health_score",
                                                      "sess_id"]]
    return alt.Chart(data, title="Health score by category (weekly mean, SPEC §3.2 v2)").mark_line(
        point=True).encode(
        x=alt.X("week:T", title="ISO week (Monday)"),
        y=alt.Y("mean(health_score):Q", title="mean health score"),
        color=alt.Color("category:N", scale=_category_scale()),
        tooltip=["week:T", "category:N", alt.Tooltip("mean(health_score):Q", format=".2f"),
                 alt.Tooltip("count(sess_id):Q", title="sessions")],
    ).properties(width=WIDTH, height=240)


def ratio_bands(signals: pd.DataFrame, thresholds: Thresholds | None = None,
                clip: float = 3.0, weekly: pd.DataFrame | None = None) -> alt.LayerChart:
    """Rolling ratio (SPEC §3.3) over the healthy / watch / narcissistic-loop bands.

    The dashed rule is the coach trigger (ratio <= coach_ratio); filled points are sessions
    whose boot fired the coach, by reason (ratio, or health over the last sessions). Ratios
    above ``clip`` are drawn at ``clip`` as triangles, named in the legend. ``weekly``: the
    ratio's weekly points (:func:`brainlab.metrics.trends.points`, series ``ratio``): each
    week's mean at its middle, a 95% bootstrap interval bar, n in the tooltip (a bar above
    ``clip`` is cut there).
    """
    t = thresholds or Thresholds()
    data = signals[["sess_id", "started_at", "ratio", "ratio_band", "coach_triggered",
                    "coach_reason"]].copy()
    data["ratio_shown"] = data["ratio"].clip(upper=clip)
    bands = pd.DataFrame([
        {"band": "narcissistic-loop", "low": 0.0, "high": t.ratio_watch},
        {"band": "watch", "low": t.ratio_watch, "high": t.ratio_healthy},
        {"band": "healthy", "low": t.ratio_healthy, "high": clip},
    ])
    band_layer = alt.Chart(bands).mark_rect(opacity=0.18).encode(
        y=alt.Y("low:Q", title="ratio n_use / (n_build + 0.5 n_explore)",
                scale=alt.Scale(domain=[0, clip])),
        y2="high:Q",
        color=alt.Color("band:N", scale=alt.Scale(domain=list(BAND_COLORS),
                                                  range=list(BAND_COLORS.values())),
                        title="ratio band"),
    )
    coach = alt.Chart(pd.DataFrame({"coach_ratio": [t.coach_ratio]})).mark_rule(
        strokeDash=[6, 4], color="#cc0000").encode(y="coach_ratio:Q")
    line = alt.Chart(data).mark_line(color="#333333").encode(
        x=alt.X("started_at:T", title="session start"), y="ratio_shown:Q",
        tooltip=["sess_id:N", alt.Tooltip("ratio:Q", format=".2f"), "ratio_band:N"])
    # clipping marked: a session whose ratio is above the top is drawn at the top as a
    # triangle, with its real value in the tooltip and the legend saying so
    clipped = alt.Chart(data[data["ratio"] > clip].assign(
        mark=f"ratio above {clip:g} (drawn at {clip:g})")).mark_point(
        shape="triangle-up", filled=True, color="#333333", size=40).encode(
        x="started_at:T", y="ratio_shown:Q",
        shape=alt.Shape("mark:N", title=None, scale=alt.Scale(range=["triangle-up"])),
        tooltip=["sess_id:N", alt.Tooltip("ratio:Q", format=".2f")])
    fired = alt.Chart(data[data["coach_triggered"].fillna(False).astype(bool)].assign(
        reason=lambda f: "coach fired: " + f["coach_reason"].fillna("?"))).mark_point(
        filled=True, size=60, stroke="white").encode(
        x="started_at:T", y="ratio_shown:Q",
        fill=alt.Fill("reason:N", title=None, scale=alt.Scale(
            domain=["coach fired: ratio", "coach fired: health"],
            range=["#cc0000", "#8172b2"])),
        tooltip=["sess_id:N", "coach_reason:N"])
    title = (f"Rolling ratio ({t.ratio_window} {t.ratio_window_unit}) with bands; dashed: coach "
             f"trigger <= {t.coach_ratio} (SPEC §3.3)")
    layers = [band_layer, coach, line, clipped, fired]
    if weekly is not None and (weekly["n"] > 0).any():
        layers += weekly_means(weekly, clip)
        title += "; ◆ weekly mean with its 95% bootstrap interval"
    return alt.layer(*layers, title=title).resolve_scale(
        color="independent").properties(width=WIDTH, height=260)


def weekly_means(weekly: pd.DataFrame, clip: float) -> list[alt.Chart]:
    """The weekly mean of a per-session series at each week's middle, its interval, its n."""
    data = weekly[weekly["n"] > 0].rename(columns={"period": "iso_week"}).copy()
    data["middle"] = pd.to_datetime(data["period_start"]) + pd.Timedelta(days=3, hours=12)
    data = data.drop(columns=["period_start"])
    data["shown"] = data["value"].clip(upper=clip)
    data["low_shown"], data["high_shown"] = data["low"].clip(upper=clip), data["high"].clip(
        upper=clip)
    data["mark"] = "weekly mean (95% bootstrap interval)"
    tooltip = ["iso_week:N", "n:Q", alt.Tooltip("value:Q", format=".2f"),
               alt.Tooltip("low:Q", format=".2f"), alt.Tooltip("high:Q", format=".2f")]
    bars = alt.Chart(data.dropna(subset=["low"])).mark_rule(color=theme.INK, size=2).encode(
        x="middle:T", y="low_shown:Q", y2="high_shown:Q", tooltip=tooltip)
    points = alt.Chart(data).mark_point(shape="diamond", filled=True, size=70,
                                        color=theme.INK).encode(
        x="middle:T", y="shown:Q", tooltip=tooltip,
        stroke=alt.Stroke("mark:N", title=None, scale=alt.Scale(range=[theme.INK])))
    return [bars, points]


def tokens_vs_output(sessions: pd.DataFrame) -> alt.Chart:
    """Tokens used against the output the health formula counts (SPEC §3.2 inputs), per session."""
    data = sessions[["sess_id", "category", "tokens_used", "commits", "todos_closed",
                     "kernel_files_touched", "adrs_written", "insights_captured",
                     "health_score"]].copy()
    parts = ["commits", "todos_closed", "kernel_files_touched", "adrs_written",
             "insights_captured"]
    data["output_units"] = data[parts].fillna(0).sum(axis=1)
    return alt.Chart(data, title="Tokens used against output (commits + todos + kernel files + "
                                 "ADRs + insights)").mark_circle(opacity=0.7).encode(
        x=alt.X("tokens_used:Q", title="tokens used"),
        y=alt.Y("output_units:Q", title="output units"),
        color=alt.Color("category:N", scale=_category_scale()),
        size=alt.Size("health_score:Q", title="health"),
        tooltip=["sess_id:N", "tokens_used:Q", "output_units:Q",
                 alt.Tooltip("health_score:Q", format=".2f")],
    ).properties(width=WIDTH, height=260)


# Distinct colours for series with no meaning of their own (agents): the theme's 5-colour
# category range gave two agents of 8 the same colour (issue 28 item 11). Tableau 10.
SERIES_COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                 "#ff9da7", "#9c755f", "#bab0ac"]


def agent_cost_trend(weekly_cost: pd.DataFrame, agents: Sequence[str]) -> alt.Chart:
    """Weekly tokens spent loading each of ``agents`` (view agent_weekly_cost, SPEC §2.5).

    One colour per agent (up to 10 agents), and legend labels never cut.
    """
    agents = list(dict.fromkeys(agents))[:len(SERIES_COLORS)]
    data = weekly_cost[weekly_cost["agent"].isin(agents)]
    return alt.Chart(data, title="Weekly load cost of the agents whose cost grows, and the "
                                 "costliest (SPEC §2.5)").mark_line(point=True).encode(
        x=alt.X("week_start:T", title="ISO week (Monday)"),
        y=alt.Y("tokens_total:Q", title="estimated tokens loaded"),
        color=alt.Color("agent:N", scale=alt.Scale(domain=agents,
                                                   range=SERIES_COLORS[:len(agents)]),
                        legend=alt.Legend(labelLimit=0, columns=2, title=None)),
        tooltip=["agent:N", "iso_week:N", "sessions_loaded:Q", "tokens_total:Q"],
    ).properties(width=WIDTH, height=260)


def alerts_per_week(weekly: pd.DataFrame, signals: Sequence[str],
                    unit: str = "sessions") -> alt.LayerChart:
    """Stacked alerts per week by signal, with the week's bad ``unit`` as a line (notebook 04).

    ``unit`` is sessions (SPEC §3.3 signals) or tickets (regulator alerts by replayed outcome).
    """
    flagged = f"{unit}_flagged"
    long = weekly.melt(id_vars=["week_start", "iso_week"], value_vars=list(signals),
                       var_name="signal", value_name=flagged)
    outcomes = set(signals) <= set(colours.OUTCOME)  # ticket alerts split by replayed outcome
    bars = alt.Chart(long).mark_bar().encode(
        x=alt.X("iso_week:N", title="ISO week"),
        y=alt.Y(f"{flagged}:Q", axis=theme.count_axis(f"firings ({unit} per signal, stacked)")),
        color=alt.Color("signal:N", scale=theme.scale("outcome", signals) if outcomes
                        else alt.Undefined),
        tooltip=["iso_week:N", "signal:N", f"{flagged}:Q"])
    bad = alt.Chart(weekly).mark_line(color="black", point=True).encode(
        x="iso_week:N", y=f"bad_{unit}:Q", tooltip=["iso_week:N", f"bad_{unit}:Q",
                                                    "true_positives:Q"])
    return alt.layer(bars, bad, title=f"Alerts per week by signal; black: bad {unit} "
                                      "(outcome labels)").properties(width=WIDTH, height=240)


def breath_alerts_per_week(weekly: pd.DataFrame, kinds: Sequence[str]) -> alt.Chart:
    """Stacked SPEC §4.4 breath alerts per week by kind (a sprint may raise several)."""
    long = weekly.melt(id_vars=["week_start", "iso_week"], value_vars=list(kinds),
                       var_name="alert", value_name="sprints_flagged")
    return alt.Chart(long, title="Breath alerts per week by kind (SPEC §4.4)").mark_bar().encode(
        x=alt.X("iso_week:N", title="ISO week"),
        y=alt.Y("sprints_flagged:Q", axis=theme.count_axis("sprints")),
        color=alt.Color("alert:N"),
        tooltip=["iso_week:N", "alert:N", "sprints_flagged:Q"]).properties(width=WIDTH,
                                                                          height=220)


def sweep_tradeoff(result: pd.DataFrame, color: str | None = None,
                   budget: float | None = None) -> alt.LayerChart:
    """Each swept threshold set as a point: recall against alerts per week (precision as size)."""
    keys = [c for c in result.columns if c not in {*METRIC_COLUMNS, "bad_tickets"}]
    data = result.assign(label=result[keys].astype(str).agg(", ".join, axis=1)
                         if keys else "SPEC defaults")
    enc = {"x": alt.X("alerts_per_week:Q", title="alerts per week"),
           "y": alt.Y("recall:Q", scale=alt.Scale(domain=[0, 1])),
           "size": alt.Size("precision:Q", scale=alt.Scale(domain=[0, 1])),
           "tooltip": ["label:N", alt.Tooltip("alerts_per_week:Q", format=".2f"),
                       alt.Tooltip("precision:Q", format=".2f"),
                       alt.Tooltip("recall:Q", format=".2f")]}
    if color:
        enc["color"] = alt.Color(f"{color}:N")
    points = alt.Chart(data).mark_circle(opacity=0.75).encode(**enc)
    layers = [points]
    if budget is not None:
        layers.append(alt.Chart(pd.DataFrame({"budget": [budget]})).mark_rule(
            strokeDash=[6, 4]).encode(x="budget:Q"))
    return alt.layer(*layers, title="Threshold sweep: recall against alert volume").properties(
        width=WIDTH, height=260)


def health_parts(parts: pd.DataFrame) -> alt.Chart:
    """Bars of a health score's numerator terms (notebook 05's step-by-step score)."""
    return alt.Chart(parts, title="What the numerator is made of (SPEC §3.2 v2)").mark_bar().encode(
        x=alt.X("points:Q"), y=alt.Y("term:N", sort=None), tooltip=["term:N", "points:Q"],
    ).properties(width=400, height=120)


def violations_by(frame: pd.DataFrame, field: str, title: str) -> alt.Chart:
    """Horizontal bars: protocol violations per value of ``field``, stacked by severity."""
    data = frame.assign(**{field: frame[field].fillna("(unknown)")})
    if field == "rule" and "rule_name" in data:  # a code alone means nothing: BOT001 boot-l0-...
        data[field] = data[field] + " " + data["rule_name"].fillna("")
    return alt.Chart(data, title=title).mark_bar().encode(
        x=alt.X("count():Q", axis=theme.count_axis("violations")),
        y=alt.Y(f"{field}:N", sort="-x", title=None),
        color=alt.Color("severity:N", title=None, scale=theme.scale("severity")),
    ).properties(width=theme.WIDTH, height=alt.Step(16))


def measured_weeks(weekly: pd.DataFrame, first_day: str = "monday") -> alt.Chart:
    """Claude Code sessions and cost per week, as the transcripts measure them.

    ``weekly``: week_start, sessions, cost_usd (a store without metabolism logs, issue 28).
    """
    base = alt.Chart(weekly).encode(x=alt.X("week_start:T", title=f"week ({first_day.capitalize()})",
                                            axis=alt.Axis(format="%Y-%m-%d", labelAngle=-40)))
    sessions = base.mark_bar().encode(
        y=alt.Y("sessions:Q", title="Claude Code sessions"),
        tooltip=["week_start:T", "sessions:Q", alt.Tooltip("cost_usd:Q", format="$,.2f")],
    ).properties(width=theme.WIDTH // 2 - 40, height=180,
                 title="Sessions per week (measured)")
    cost = base.mark_bar(color=theme.ALERT).encode(
        y=alt.Y("cost_usd:Q", title="cost (USD)", axis=alt.Axis(format="$,.0f")),
        tooltip=["week_start:T", "sessions:Q", alt.Tooltip("cost_usd:Q", format="$,.2f")],
    ).properties(width=theme.WIDTH // 2 - 40, height=180, title="Cost per week (measured)")
    return alt.hconcat(sessions, cost)
