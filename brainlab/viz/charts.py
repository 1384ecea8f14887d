"""Altair chart builders: DataFrames in (already computed by SQL views), charts out.

No metric is computed here: a builder only reshapes columns for plotting and draws the
threshold lines it is given. :func:`to_svg` renders a chart offline with vl-convert and
refuses any SVG that could run code once inlined in an HTML page.
"""

from __future__ import annotations

from xml.etree import ElementTree

import altair as alt
import pandas as pd
import vl_convert

from brainlab.common.errors import ReportError
from brainlab.spec import colours
from brainlab.viz import theme

_ACTIVE_TAGS = {"script", "foreignobject", "iframe", "object", "embed"}


def active_parts(svg: str) -> list[str]:
    """Every element or attribute of ``svg`` that could run code once inlined in HTML."""
    found = []
    for element in ElementTree.fromstring(svg).iter():
        tag = str(element.tag).rsplit("}", 1)[-1].lower()
        if tag in _ACTIVE_TAGS:
            found.append(f"<{tag}>")
        for name, value in element.attrib.items():
            local = name.rsplit("}", 1)[-1].lower()
            if local.startswith("on") or value.strip().lower().startswith("javascript:"):
                found.append(f"<{tag} {local}>")
    return found


def to_svg(chart: alt.TopLevelMixin) -> str:
    """Render ``chart`` to an SVG string offline (no browser, no network).

    vl-convert escapes every text mark (``<`` becomes ``&lt;``); the check below is a second
    line of defence: an SVG holding a script, an event handler or foreign HTML is refused.
    """
    return checked(vl_convert.vegalite_to_svg(spec(chart)))


def spec(chart: alt.TopLevelMixin) -> dict:
    """The themed chart's Vega-Lite spec, as :func:`to_svg` converts it."""
    # validate=False: altair's JSON-schema check of a builder's fixed spec cost ~0.1 CPU-s a
    # chart (issue 28 item 8); vl-convert still compiles, and rejects, a malformed spec
    return theme.themed(chart).to_dict(validate=False)


def checked(svg: str) -> str:
    """``svg`` unless it holds active content (then ReportError): see :func:`to_svg`."""
    if active_parts(svg):
        raise ReportError("chart SVG contains active content; refusing to embed it")
    return svg


def _category_scale() -> alt.Scale:
    return alt.Scale(domain=list(theme.CATEGORY_COLORS), range=list(theme.CATEGORY_COLORS.values()))


def sessions_per_week(trend: pd.DataFrame,
                      marks: pd.DataFrame | None = None) -> alt.Chart | alt.LayerChart:
    """Stacked bars: every session per week, by category (weekly_health_for columns).

    Sessions of no scored category (chill, learning...) are their own segment, "other", so
    the bars add up to the week's sessions. ``marks``: the change points of the category
    shares (:func:`brainlab.metrics.trends.change_marks`), a dashed rule each.
    """
    frame = trend.assign(n_other=trend["sessions"] - trend["n_use"] - trend["n_build"]
                         - trend["n_explore"])
    data = frame.melt(id_vars=["iso_week"], value_vars=["n_use", "n_build", "n_explore",
                                                        "n_other"],
                      var_name="category", value_name="count")
    names = {"n_use": "use-brain", "n_build": "build-brain", "n_explore": "explore-brain",
             "n_other": "other"}
    data["category"] = data["category"].map(names)
    scale = alt.Scale(domain=[*theme.CATEGORY_COLORS, "other"],
                      range=[*theme.CATEGORY_COLORS.values(), colours.NEUTRAL])
    x = alt.X("iso_week:O", title="ISO week", axis=alt.Axis(labelAngle=-40))
    bars = alt.Chart(data).mark_bar().encode(
        x=x, y=alt.Y("count:Q", axis=theme.count_axis("sessions"), stack=True),
        color=alt.Color("category:N", scale=scale, title=None),
    )
    return _with_changes(bars, marks, x).properties(width=theme.WIDTH, height=180,
                                                    title="Sessions per week by category")


def runs(frame: pd.DataFrame, by: str, value: str, order: list[str]) -> pd.DataFrame:
    """``frame`` with a ``run`` column: consecutive periods of ``order`` holding a value.

    A line drawn with ``detail="run"`` never joins two points across a period without data
    (an empty week is a gap, not a straight line over it).
    """
    position = {p: i for i, p in enumerate(order)}
    out = []
    for _key, rows in frame.groupby(by, sort=False):
        rows = rows[rows[value].notna()].copy()
        at = rows["iso_week"].map(position).to_numpy()
        breaks = (at[1:] - at[:-1]) > 1 if len(at) else []
        run = [0]
        for gap in breaks:
            run.append(run[-1] + int(gap))
        rows["run"] = [f"{_key}:{r}" for r in run[:len(rows)]]
        out.append(rows)
    return pd.concat(out, ignore_index=True) if out else frame.assign(run=[])


CHANGE_MARKS = ["change point (up)", "change point (down)"]


def change_rules(marks: pd.DataFrame, x: alt.X | str = "iso_week:O") -> alt.Chart:
    """A dashed rule at each change point of ``marks`` (:func:`trends.change_marks`).

    Its legend entry says "change point (up)" or "(down)", its tooltip "since W43: ..."; an
    empty ``marks`` draws nothing (the layer keeps the chart's scales).
    """
    data = (marks.drop(columns=["week_start"]) if x == "iso_week:O"
            else marks.assign(week_start=pd.to_datetime(marks["week_start"])))
    return alt.Chart(data).mark_rule(strokeDash=[5, 3], size=2).encode(
        x=x, color=alt.Color("mark:N", title=None,
                             scale=alt.Scale(domain=CHANGE_MARKS,
                                             range=[theme.ALERT, theme.MUTED])),
        tooltip=[alt.Tooltip("since:N", title="change")],
        description="since:N")


def _with_changes(chart, marks: pd.DataFrame | None, x) -> alt.LayerChart:
    """``chart`` with :func:`change_rules` layered on (their colours a scale of their own)."""
    if marks is None or marks.empty:
        return chart if isinstance(chart, alt.LayerChart) else alt.layer(chart)
    return alt.layer(chart, change_rules(marks, x)).resolve_scale(color="independent")


def health_by_category(frame: pd.DataFrame, weeks: list[str] | None = None,
                       marks: pd.DataFrame | None = None) -> alt.LayerChart:
    """Mean health per week and category, each point with its 95% bootstrap interval and n.

    ``frame``: iso_week, category, sessions, mean_health, and low/high when known
    (:func:`brainlab.metrics.trends.points`); ``weeks``: every week of the window, so a week
    without sessions of a category is a gap in its line; ``marks``: the change points to
    draw (:func:`brainlab.metrics.trends.change_marks`).
    """
    order = weeks or sorted(frame["iso_week"].unique())
    data = runs(frame.sort_values("iso_week"), "category", "mean_health", order)
    x = alt.X("iso_week:O", title="ISO week", scale=alt.Scale(domain=order),
              axis=alt.Axis(labelAngle=-40))
    color = alt.Color("category:N", scale=_category_scale(), title=None)
    line = alt.Chart(data).mark_line(point=True).encode(
        x=x, y=alt.Y("mean_health:Q", title="mean health score"), color=color,
        detail="run:N", tooltip=["iso_week", "category", "sessions", "mean_health"])
    layers = [line]
    if "low" in data and data["low"].notna().any():
        layers.insert(0, alt.Chart(data.dropna(subset=["low"])).mark_rule(opacity=0.5).encode(
            x=x, y="low:Q", y2="high:Q", color=color))
    return _with_changes(alt.layer(*layers), marks, x).properties(
        width=theme.WIDTH,
        title="Health score by category (mean, 95% bootstrap interval; a gap: no session)")


def rolling_ratio(series: pd.DataFrame, coach_ratio: float, watch: float,
                  healthy: float, marks: pd.DataFrame | None = None) -> alt.LayerChart:
    """The rolling ratio per session, the coach-trigger band and the sessions that fired it.

    ``series`` has started_at, ratio, coach_triggered, in_week (metrics.report.ratio_series);
    the shaded band is ratio <= ``coach_ratio`` (SPEC §3.3), the dashed rules the watch and
    healthy bands' lower bounds; ``marks``: the change points of the ratio and the coach
    triggers (:func:`brainlab.metrics.trends.change_marks`), a dashed rule at the first day
    of the week each starts.
    """
    data = series.dropna(subset=["ratio"]).copy()
    data["when"] = pd.to_datetime(data["started_at"])
    top = max(float(data["ratio"].max()) if not data.empty else 0.0, healthy) * 1.1
    scale = alt.Scale(domain=[0, top], clamp=True)
    band = alt.Chart(pd.DataFrame({"low": [0.0], "high": [coach_ratio]})).mark_rect(
        color=theme.ALERT, opacity=0.12).encode(y=alt.Y("low:Q", scale=scale), y2="high:Q")
    rules = alt.Chart(pd.DataFrame({"level": [watch, healthy], "band": ["watch", "healthy"]}))\
        .mark_rule(strokeDash=[4, 3], color=theme.MUTED).encode(y=alt.Y("level:Q", scale=scale))
    line = alt.Chart(data).mark_line(color=theme.CATEGORY_COLORS["use-brain"],
                                     interpolate="step-after").encode(
        x=alt.X("when:T", title=None, axis=alt.Axis(format="%d %b")),
        y=alt.Y("ratio:Q", title="ratio use / (build + 0.5 explore)", scale=scale),
    )
    fired = alt.Chart(data[data["coach_triggered"].fillna(False).astype(bool)].assign(
        reason=lambda f: "coach fired: " + f["coach_reason"].fillna("?"))).mark_point(
        shape="triangle-up", size=70, filled=True).encode(
        x="when:T", y=alt.Y("ratio:Q", scale=scale),
        fill=alt.Fill("reason:N", title=None, scale=alt.Scale(
            domain=["coach fired: ratio", "coach fired: health"],
            range=[theme.ALERT, "#8172b2"])))
    return _with_changes(alt.layer(band, rules, line, fired), marks,
                         alt.X("week_start:T")).properties(width=theme.WIDTH,
        title=f"Rolling ratio (coach band: ratio <= {coach_ratio:g}; ▲ coach fired, by reason)")


def conserve_signals(trend: pd.DataFrame) -> alt.Chart:
    """Grouped bars: conserve-mode signals per ISO week (weekly_health_for columns)."""
    names = {"inefficient": "inefficient session", "conserve_next": "conserve next",
             "narcissistic": "narcissistic ratio"}
    data = trend.melt(id_vars=["iso_week"], value_vars=list(names), var_name="signal",
                      value_name="count")
    data["signal"] = data["signal"].map(names)
    return alt.Chart(data, title="Conserve signals per week").mark_bar().encode(
        x=alt.X("iso_week:O", title="ISO week", axis=alt.Axis(labelAngle=-40)),
        xOffset="signal:N",
        y=alt.Y("count:Q", axis=theme.count_axis("sessions")),
        color=alt.Color("signal:N", title=None,
                        scale=alt.Scale(range=["#d9822b", "#8172b2", theme.ALERT])),
    ).properties(width=theme.WIDTH, height=180)


def agent_cost(board: pd.DataFrame) -> alt.Chart:
    """Horizontal bars: tokens spent loading each agent, always-loaded-little-used in red."""
    data = board.copy()
    data["flag"] = (data["is_always_loaded"].fillna(False).astype(bool)
                    & data["is_little_used"].fillna(False).astype(bool)).map(
        {True: "always loaded, little used", False: "other"})
    return alt.Chart(data, title="Agent cost leaderboard (tokens loaded)").mark_bar().encode(
        x=alt.X("tokens_total:Q", title="tokens loaded (bytes / 4 per load)"),
        y=alt.Y("agent:N", sort="-x", title=None),
        color=alt.Color("flag:N", title=None, scale=alt.Scale(
            domain=["always loaded, little used", "other"],
            range=[theme.ALERT, theme.CATEGORY_COLORS["use-brain"]])),
    ).properties(height=alt.Step(16))


def usage_per_day(daily: pd.DataFrame, tz: str = "UTC") -> alt.Chart:
    """Stacked bars: the week's Claude Code cost per day of zone ``tz``, split by model."""
    days = daily.assign(day=pd.to_datetime(daily["day"]).dt.strftime("%Y-%m-%d"))  # not ISO times
    return alt.Chart(days, title="Claude Code cost per day (USD)").mark_bar().encode(
        x=alt.X("day:O", title=f"day ({tz})", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("cost_usd:Q", title="USD", axis=alt.Axis(format="$,.2f")),
        color=alt.Color("model:N", title=None),
    ).properties(width=theme.WIDTH, height=180)


def limit_use(windows: pd.DataFrame) -> alt.Chart:
    """Points and rules: the peak use of each 5-hour and 7-day limit window (usage_limits grain)."""
    frame = windows.assign(kind=windows["window_kind"].map({"5h": "5-hour", "7d": "7-day"}))
    base = alt.Chart(frame, title="Rate-limit use per window (peak %)")
    return base.mark_rule(strokeWidth=3).encode(
        x=alt.X("window_start:T", title="window (UTC)"), x2="resets_at:T",
        y=alt.Y("peak_used_pct:Q", title="peak used %", scale=alt.Scale(domain=[0, 100])),
        color=alt.Color("kind:N", title=None),
    ).properties(width=theme.WIDTH, height=160)


def violations_per_week(trend: pd.DataFrame) -> alt.Chart:
    """Stacked bars: protocol violations per ISO week by severity (metrics.compliance.weekly)."""
    return alt.Chart(trend, title="Protocol violations per week").mark_bar().encode(
        x=alt.X("iso_week:O", title="ISO week", axis=alt.Axis(labelAngle=-40)),
        y=alt.Y("violations:Q", axis=theme.count_axis("violations")),
        color=alt.Color("severity:N", title=None, scale=theme.scale("severity")),
    ).properties(width=theme.WIDTH, height=180)
