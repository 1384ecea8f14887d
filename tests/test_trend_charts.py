"""Charts that do not mislead (issue 43 item 4), checked on the SVG vl-convert draws.

A line never joins two points across a week without data; counts have integer ticks; the
sessions bar counts every session; clipped ratios and coach reasons are in the legend.
"""

from __future__ import annotations

import re

import altair as alt
import pandas as pd

from brainlab.spec.thresholds import Thresholds
from brainlab.viz import charts, explore

WEEKS = ["2026-W40", "2026-W41", "2026-W42", "2026-W43"]


def line_paths(svg: str) -> list[list[float]]:
    """The x coordinates of every drawn line path (one list per path)."""
    paths = []
    for group in re.finditer(r'<g class="mark-line role-mark[^"]*"[^>]*>(.*?)</g>', svg, re.S):
        for d in re.findall(r'd="([^"]+)"', group.group(1)):
            paths.append([float(x) for x in re.findall(r"[ML](-?[\d.]+),", d)])
    return paths


def joins_across_a_gap(svg: str) -> bool:
    """True when a line path has a segment longer than one week's step."""
    paths = line_paths(svg)
    xs = sorted({x for p in paths for x in p})
    step = min(b - a for a, b in zip(xs, xs[1:], strict=False))
    return any(b - a > 1.5 * step for p in paths for a, b in zip(p, p[1:], strict=False))


def health_frame() -> pd.DataFrame:
    """use-brain has no session in W42 (the demo's planted week looks like this)."""
    return pd.DataFrame({
        "iso_week": WEEKS[:2] + WEEKS[3:] + WEEKS,
        "category": ["use-brain"] * 3 + ["build-brain"] * 4,
        "sessions": [3, 4, 5, 1, 2, 3, 4],
        "mean_health": [2.0, 2.5, 3.0, 1.0, 1.5, 1.2, 1.1],
        "low": [1.5, 2.0, 2.5, 0.5, 1.0, 1.0, 1.0], "high": [2.5, 3.0, 3.5, 1.5, 2.0, 1.4, 1.2]})


def test_a_line_never_joins_points_across_an_empty_week():
    svg = charts.to_svg(charts.health_by_category(health_frame(), WEEKS))
    assert len(line_paths(svg)) >= 2 and not joins_across_a_gap(svg)
    # the check can fail: the same data drawn as one plain line per category joins W41-W43
    plain = alt.Chart(health_frame()).mark_line().encode(
        x=alt.X("iso_week:O", scale=alt.Scale(domain=WEEKS)), y="mean_health:Q",
        color="category:N")
    assert joins_across_a_gap(charts.to_svg(plain))


def test_health_points_carry_their_interval_and_the_title_says_which():
    svg = charts.to_svg(charts.health_by_category(health_frame(), WEEKS))
    assert "95% bootstrap interval" in svg
    assert 'class="mark-rule role-mark' in svg  # the interval bars


def test_sessions_bar_counts_every_session_on_integer_ticks():
    """W42 of the demo: 26 sessions, 6 of them of no scored category (chill, learning)."""
    trend = pd.DataFrame({"iso_week": ["2026-W42"], "sessions": [26], "n_use": [12],
                          "n_build": [5], "n_explore": [3]})
    chart = charts.sessions_per_week(trend)
    stacked = chart.data.groupby("iso_week")["count"].sum()
    assert stacked["2026-W42"] == 26
    assert "other" in set(chart.data["category"])
    svg = charts.to_svg(chart)
    ticks = re.findall(r'<text[^>]*>(\d+(?:\.\d+)?)</text>', svg)
    assert ticks and all("." not in t for t in ticks)  # no 2.5 sessions on the axis


def test_clipped_ratios_and_coach_reasons_are_in_the_legend():
    signals = pd.DataFrame({
        "sess_id": ["a", "b", "c", "d"],
        "started_at": pd.to_datetime(["2026-10-01", "2026-10-02", "2026-10-03", "2026-10-04"]),
        "ratio": [4.5, 0.3, 1.0, 0.7], "ratio_band": ["healthy", "narcissistic-loop",
                                                    "healthy", "watch"],
        "coach_triggered": [False, True, False, True],
        "coach_reason": [None, "ratio", None, "health"]})
    svg = charts.to_svg(explore.ratio_bands(signals, Thresholds()))
    assert "ratio above 3 (drawn at 3)" in svg
    assert "coach fired: ratio" in svg and "coach fired: health" in svg
