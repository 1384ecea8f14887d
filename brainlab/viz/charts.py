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


def sessions_per_week(trend: pd.DataFrame) -> alt.Chart:
    """Stacked bars: sessions per ISO week by category (weekly_health_for columns)."""
    data = trend.melt(id_vars=["iso_week"], value_vars=["n_use", "n_build", "n_explore"],
                      var_name="category", value_name="count")
    data["category"] = data["category"].map(
        {"n_use": "use-brain", "n_build": "build-brain", "n_explore": "explore-brain"})
    return alt.Chart(data, title="Sessions per week by category").mark_bar().encode(
        x=alt.X("iso_week:O", title="ISO week", axis=alt.Axis(labelAngle=-40)),
        y=alt.Y("count:Q", axis=theme.count_axis("sessions"), stack=True),
        color=alt.Color("category:N", scale=_category_scale(), title=None),
    ).properties(width=theme.WIDTH, height=180)


def health_by_category(frame: pd.DataFrame) -> alt.Chart:
    """Lines: mean health score per ISO week and category (weekly_category_health columns)."""
    return alt.Chart(frame, title="Health score by category").mark_line(point=True).encode(
        x=alt.X("iso_week:O", title="ISO week", axis=alt.Axis(labelAngle=-40)),
        y=alt.Y("mean_health:Q", title="mean health score"),
        color=alt.Color("category:N", scale=_category_scale(), title=None),
    ).properties(width=theme.WIDTH)


def rolling_ratio(series: pd.DataFrame, coach_ratio: float, watch: float,
                  healthy: float) -> alt.LayerChart:
    """The rolling ratio per session, the coach-trigger band and the sessions that fired it.

    ``series`` has started_at, ratio, coach_triggered, in_week (metrics.report.ratio_series);
    the shaded band is ratio <= ``coach_ratio`` (SPEC §3.3), the dashed rules the watch and
    healthy bands' lower bounds.
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
    fired = alt.Chart(data[data["coach_triggered"].fillna(False).astype(bool)]).mark_point(
        color=theme.ALERT, shape="triangle-up", size=70, filled=True).encode(
        x="when:T", y=alt.Y("ratio:Q", scale=scale))
    return alt.layer(band, rules, line, fired).properties(width=theme.WIDTH,
        title=f"Rolling ratio (coach band: ratio <= {coach_ratio:g}; ▲ coach fired)")


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
        y=alt.Y("count:Q", title="sessions"),
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
