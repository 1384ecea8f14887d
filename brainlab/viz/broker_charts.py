"""Altair charts for the replays (notebooks 02 and 03): they draw replay frames, no metrics.

Every chart carries its n and its intervals (the replays' percentile bootstrap, 90%): a point
is an estimate, a bar its interval. Colours: one per policy or rule set (the theme's range);
outcomes in spec/colours.py's (integrated green, ended red, escalated amber), as in every
other chart.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from brainlab.spec import colours
from brainlab.viz import theme
from brainlab.viz.theme import ALERT, BAND_COLORS, INK, MUTED

# SPEC §6.6 outcomes: one colour per outcome for every chart (spec/colours.py)
OUTCOME_ORDER = (*colours.OUTCOME, "unknown")


def short_name(path: str, width: int = 32) -> str:
    """A file's name (its last path part), cut in the middle (theme.cut_middle) when long."""
    name = str(path).rstrip("/").rsplit("/", 1)[-1] or str(path)
    return theme.cut_middle(name, width)


def frontier(policies: pd.DataFrame, n: int | None = None) -> alt.Chart:
    """Tokens against miss rate, one point per policy with both 90% intervals as bars.

    ``policies``: :func:`brainlab.sim.broker_output.as_frame` of the report's ``policies``
    (tokens, tokens_low, tokens_high, miss_rate, miss_rate_low, miss_rate_high). Policies are
    told apart by colour and the legend (no labels on the points, which overprint).
    """
    data = policies.copy()
    data["policy"] = data["policy"].astype(str)
    base = alt.Chart(data).encode(color=alt.Color("policy:N", title="policy"))
    points = base.mark_point(filled=True, size=110).encode(
        x=alt.X("miss_rate:Q", title="miss rate (referenced, not preloaded)",
                axis=alt.Axis(format="%")),
        y=alt.Y("tokens:Q", title="tokens (loaded + read on demand)", scale=alt.Scale(zero=False)),
        shape=alt.Shape("policy:N", title="policy"),
        tooltip=["policy", alt.Tooltip("tokens:Q", format=","),
                 alt.Tooltip("tokens_low:Q", format=","), alt.Tooltip("tokens_high:Q", format=","),
                 alt.Tooltip("miss_rate:Q", format=".1%"),
                 alt.Tooltip("miss_rate_low:Q", format=".1%"),
                 alt.Tooltip("miss_rate_high:Q", format=".1%")])
    ybars = base.mark_rule(strokeWidth=2).encode(x="miss_rate:Q", y="tokens_low:Q",
                                                 y2="tokens_high:Q")
    xbars = base.mark_rule(strokeWidth=2).encode(y="tokens:Q", x="miss_rate_low:Q",
                                                 x2="miss_rate_high:Q")
    title = "Policies: tokens against miss rate, 90% bootstrap intervals"
    if n is not None:
        title += f" (n = {n:,} sprints)"
    return (ybars + xbars + points).properties(title=title, width=460, height=300)


def breath_over_sprints(sprints: pd.DataFrame, metric: str = "breath_depth") -> alt.Chart:
    """A SPEC §4.4 breath metric per sprint, one small panel per policy; alerts as red rules.

    A sprint whose accumulation alert fired (breath_depth rising over consecutive sprints of
    its project) is a red vertical rule across its panel, not a mark on the line.
    """
    data = sprints.copy()
    data["policy"] = data["policy"].astype(str)
    data["sprint_number"] = data.groupby("policy").cumcount() + 1
    base = alt.Chart().encode(x=alt.X("sprint_number:Q", title="sprint (replay order)"))
    line = base.mark_line(color=MUTED, strokeWidth=1.5).encode(
        y=alt.Y(f"{metric}:Q", title=metric),
        tooltip=["sprint_id", "project", "policy", metric])
    alerts = base.mark_rule(color=ALERT, opacity=0.6).transform_filter(
        alt.datum.alert_accumulation)
    n = int(data.groupby("policy").size().max()) if len(data) else 0
    return alt.layer(line, alerts, data=data).properties(width=520, height=60).facet(
        row=alt.Row("policy:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
    ).properties(title=f"{metric} per sprint (n = {n:,} sprints; red: accumulation alert)")


def most_missed(missed: pd.DataFrame, top: int = 10) -> alt.Chart:
    """The files most often missed (referenced but not preloaded), per policy, by file name.

    ``missed``: rows of policy, file, misses (the report's ``missed_files``).
    """
    data = missed.copy()
    data["policy"] = data["policy"].astype(str)
    data["file_name"] = data["file"].map(short_name)
    keep = data.groupby("file")["misses"].sum().nlargest(top).index
    data = data[data["file"].isin(keep)]
    # two files with the same name in different folders stay two bars
    dupes = data.groupby("file_name")["file"].transform("nunique") > 1
    data.loc[dupes, "file_name"] = data.loc[dupes, "file"].map(lambda p: short_name(
        "/".join(str(p).rsplit("/", 2)[-2:]), 40))
    order = data.groupby("file_name")["misses"].sum().sort_values(ascending=False).index
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("misses:Q", axis=theme.count_axis(
            "misses (agent-sprints that read the file on demand)")),
        y=alt.Y("file_name:N", sort=list(order), title=None, axis=alt.Axis(labelLimit=0)),
        color=alt.Color("policy:N", title="policy"), yOffset="policy:N",
        tooltip=["file", "policy", "misses"],
    ).properties(title=f"The {min(top, len(order))} files most often missed, by file name",
                 width=420, height=30 * len(order))


def predicted_vs_actual(rows: pd.DataFrame, title: str) -> alt.Chart:
    """Change check: per figure, the predicted interval (bar), the prediction and the actual.

    ``rows``: figure, predicted, predicted_low, predicted_high, actual, covered. One panel per
    figure, each on its own scale.
    """
    data = rows.copy()
    data["covered"] = data["covered"].map({True: "covered", False: "not covered"})
    base = alt.Chart().encode(y=alt.Y("figure:N", title=None, axis=None))
    bars = base.mark_rule(strokeWidth=8, opacity=0.35, color=MUTED).encode(
        x=alt.X("predicted_low:Q", title=None, scale=alt.Scale(zero=False)),
        x2="predicted_high:Q")
    predicted = base.mark_tick(color=INK, thickness=2, size=18).encode(x="predicted:Q")
    actual = base.mark_point(filled=True, size=90).encode(
        x="actual:Q", color=alt.Color("covered:N", title="actual", scale=alt.Scale(
            domain=["covered", "not covered"], range=[BAND_COLORS["healthy"], ALERT])),
        tooltip=["figure", "predicted", "predicted_low", "predicted_high", "actual"])
    return alt.layer(bars, predicted, actual, data=data).properties(
        width=420, height=28).facet(
        row=alt.Row("figure:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
    ).resolve_scale(x="independent").properties(
        title=title + " (bar: 90% prediction interval, tick: predicted, dot: actual)")


def outcome_shares(shares: pd.DataFrame, n: int) -> alt.Chart:
    """Share of tickets per outcome and rule set, in the outcome colours (integrated green)."""
    domain = [o for o in OUTCOME_ORDER if o in set(shares["outcome"])]
    return alt.Chart(shares).mark_bar().encode(
        x=alt.X("share:Q", axis=alt.Axis(format="%"), title="share of tickets"),
        y=alt.Y("rules:N", title="rule set"),
        color=alt.Color("outcome:N", scale=theme.scale("outcome", domain)),
        tooltip=["rules", "outcome", "tickets", alt.Tooltip("share:Q", format=".1%")],
    ).properties(title=f"Outcomes per rule set (n = {n:,} tickets)", width=420)


def rule_set_points(rule_sets: pd.DataFrame, n: int) -> alt.Chart:
    """Wake-ups against loop sessions per ticket, one point per rule set, 90% bars both ways."""
    base = alt.Chart(rule_sets).encode(color=alt.Color("rules:N", title="rule set"))
    points = base.mark_point(filled=True, size=90).encode(
        x=alt.X("loop_sessions_per_ticket:Q", title="loop sessions per ticket"),
        y=alt.Y("wakeups_per_ticket:Q", title="supervisor wake-ups per ticket"),
        shape=alt.Shape("rules:N", title="rule set"),
        tooltip=["rules", "wakeups_per_ticket", "loop_sessions_per_ticket"])
    xbars = base.mark_rule().encode(x="loop_sessions_per_ticket_low:Q",
                                    x2="loop_sessions_per_ticket_high:Q",
                                    y="wakeups_per_ticket:Q")
    ybars = base.mark_rule().encode(y="wakeups_per_ticket_low:Q",
                                    y2="wakeups_per_ticket_high:Q",
                                    x="loop_sessions_per_ticket:Q")
    return (xbars + ybars + points).properties(
        title=f"Rule sets: wake-ups against loop sessions, 90% intervals (n = {n:,} tickets)",
        width=420)
