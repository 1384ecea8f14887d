"""Charts of threshold tuning (notebook 04): held-out candidates with intervals, alerting sessions.

Every chart carries its n and its interval: the candidates' differences are bootstrap
intervals over the confirm weeks (brainlab.sim.tuning.engine), axes fitted to the data
(not fixed 0-1), and the weekly chart counts sessions (a session firing several signals
counts once).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from brainlab.viz import theme

WIDTH = 620


def alerting_per_week(weekly: pd.DataFrame) -> alt.LayerChart:
    """Sessions with at least one alert per ISO week (bars) and bad sessions (black line)."""
    bars = alt.Chart(weekly).mark_bar(color=theme.ALERT, opacity=0.7).encode(
        x=alt.X("iso_week:N", title="ISO week"),
        y=alt.Y("alerts:Q", title="sessions"),
        tooltip=["iso_week:N", alt.Tooltip("sessions:Q", title="sessions"),
                 alt.Tooltip("alerts:Q", title="sessions with an alert"),
                 alt.Tooltip("bad_sessions:Q", title="bad (label)"),
                 alt.Tooltip("true_positives:Q", title="alerted and bad")])
    bad = alt.Chart(weekly).mark_line(color="black", point=True).encode(
        x="iso_week:N", y="bad_sessions:Q")
    n = int(weekly["sessions"].sum()) if "sessions" in weekly else 0
    return alt.layer(bars, bad, title=f"Sessions with at least one alert per week (bars; a "
                                      f"session firing several signals counts once), black: "
                                      f"bad sessions (label); n = {n:,} sessions").properties(
        width=WIDTH, height=240)


def _rows(result: dict, x: str, y: str) -> pd.DataFrame:
    rows = []
    for name, row in [("defaults", result["defaults"]),
                      *((", ".join(f"{k}={v}" for k, v in c["changes"].items()), c)
                        for c in result["candidates"])]:
        diff = row.get("difference", {}).get(y, [0.0, 0.0, 0.0]) if name != "defaults" \
            else [0.0, 0.0, 0.0]
        if row.get(x) is None or diff[0] is None:
            continue
        rows.append({"set": name, x: row[x][0], "difference": diff[0],
                     "low": diff[1] if diff[1] is not None else diff[0],
                     "high": diff[2] if diff[2] is not None else diff[0],
                     "kind": "defaults" if name == "defaults" else (
                         "selected" if row.get("changes") == result.get("selected")
                         else "candidate")})
    return pd.DataFrame(rows)


def candidates(result: dict, x: str = "alerts_per_week", y: str = "informedness",
               budget: float | None = None) -> alt.LayerChart:
    """Each candidate's held-out difference from the defaults in ``y`` against ``x``.

    Points with their 95% bootstrap interval (over the confirm weeks, paired with the
    defaults), a rule at 0 (no better than the defaults) and, when given, the budget on x.
    Both axes fit the data.
    """
    data = _rows(result, x, y)
    if data.empty:
        data = pd.DataFrame({"set": [], x: [], "difference": [], "low": [], "high": [],
                             "kind": []})
    base = alt.Chart(data)
    xs = alt.X(f"{x}:Q", title=x.replace("_", " ") + " (confirm weeks)",
               scale=alt.Scale(zero=False, nice=True))
    color = alt.Color("kind:N", title=None, scale=alt.Scale(
        domain=["defaults", "selected", "candidate"], range=[theme.INK, theme.ALERT, theme.MUTED]))
    bars = base.mark_rule(opacity=0.6).encode(x=xs, y=alt.Y("low:Q", scale=alt.Scale(
        zero=False, nice=True), title=f"{y} minus the defaults'"), y2="high:Q", color=color)
    points = base.mark_circle(size=60).encode(
        x=xs, y="difference:Q", color=color,
        tooltip=["set:N", alt.Tooltip(f"{x}:Q", format=".2f"),
                 alt.Tooltip("difference:Q", format="+.3f"), alt.Tooltip("low:Q", format="+.3f"),
                 alt.Tooltip("high:Q", format="+.3f")])
    zero = alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(strokeDash=[4, 4]).encode(
        y="zero:Q")
    layers = [bars, points, zero]
    if budget is not None:
        layers.append(alt.Chart(pd.DataFrame({"budget": [budget]})).mark_rule(
            strokeDash=[6, 4], color=theme.ALERT).encode(x="budget:Q"))
    split = result.get("split", {})
    n = len(result["candidates"])
    return alt.layer(*layers, title=f"{n} candidates on the confirm weeks "
                                    f"({split.get('confirm_weeks', '')}): difference from the "
                                    f"defaults, 95% bootstrap over weeks").properties(
        width=WIDTH, height=260)


def precision_against_base_rate(result: dict, budget: float | None = None) -> alt.LayerChart:
    """Each candidate's held-out precision (Wilson 95%) against its alerts per week.

    The base rate is a line with its band: alerts on the line pick bad units no better than
    chance (lift 1).
    """
    rows = []
    for name, row in [("defaults", result["defaults"]),
                      *((", ".join(f"{k}={v}" for k, v in c["changes"].items()), c)
                        for c in result["candidates"])]:
        precision, per_week = row.get("precision"), row.get("alerts_per_week")
        if not precision or precision[0] is None or not per_week or per_week[0] is None:
            continue
        rows.append({"set": name, "alerts_per_week": per_week[0], "precision": precision[0],
                     "low": precision[1], "high": precision[2],
                     "kind": "defaults" if name == "defaults" else (
                         "selected" if row.get("changes") == result.get("selected")
                         else "candidate")})
    data = pd.DataFrame(rows, columns=["set", "alerts_per_week", "precision", "low", "high",
                                       "kind"])
    rate = result.get("base_rate") or [None, None, None]
    xs = alt.X("alerts_per_week:Q", title="alerts per week (confirm weeks)",
               scale=alt.Scale(zero=False, nice=True))
    ys = alt.Y("low:Q", title="precision (Wilson 95%)", scale=alt.Scale(zero=False, nice=True))
    color = alt.Color("kind:N", title=None, scale=alt.Scale(
        domain=["defaults", "selected", "candidate"], range=[theme.INK, theme.ALERT, theme.MUTED]))
    base = alt.Chart(data)
    layers = [base.mark_rule(opacity=0.6).encode(x=xs, y=ys, y2="high:Q", color=color),
              base.mark_circle(size=60).encode(
                  x=xs, y="precision:Q", color=color,
                  tooltip=["set:N", alt.Tooltip("alerts_per_week:Q", format=".2f"),
                           alt.Tooltip("precision:Q", format=".3f"),
                           alt.Tooltip("low:Q", format=".3f"),
                           alt.Tooltip("high:Q", format=".3f")])]
    if rate[0] is not None:
        band = pd.DataFrame({"rate": [rate[0]], "low": [rate[1]], "high": [rate[2]]})
        layers.append(alt.Chart(band).mark_rect(opacity=0.12, color=theme.INK).encode(
            y="low:Q", y2="high:Q"))
        layers.append(alt.Chart(band).mark_rule(color=theme.INK).encode(y="rate:Q"))
    if budget is not None:
        layers.append(alt.Chart(pd.DataFrame({"budget": [budget]})).mark_rule(
            strokeDash=[6, 4], color=theme.ALERT).encode(x="budget:Q"))
    counts = result["defaults"].get("counts", {})
    return alt.layer(*layers, title=f"Precision against the base rate (line and band: "
                                    f"{int(counts.get('bad', 0))} bad of "
                                    f"{int(counts.get('labelled', 0))} labelled on the confirm "
                                    "weeks)").properties(width=WIDTH, height=260)
