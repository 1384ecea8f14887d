"""One look for every brainlab chart: fonts, palette, sizes (altair config, no data logic).

:func:`themed` applies the theme to a chart explicitly (no global altair state is needed
for reports); :func:`enable` makes it altair's active theme for interactive notebooks.
"""

from __future__ import annotations

import altair as alt

from brainlab.spec import colours

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
WIDTH = 640
HEIGHT = 220

# Every colour of a meaning comes from brainlab.spec.colours (one table for notebooks and report).
CATEGORY_COLORS = {k: colours.CATEGORY[k] for k in ("use-brain", "build-brain", "explore-brain")}
BAND_COLORS = colours.RATIO_BAND
ALERT = colours.BAD
MUTED = colours.NEUTRAL
INK = "#222222"


def config() -> dict:
    """The altair/Vega-Lite config dictionary of the brainlab theme."""
    return {
        "background": "white",
        "font": FONT,
        "view": {"continuousWidth": WIDTH, "continuousHeight": HEIGHT, "stroke": None},
        "title": {"fontSize": 14, "anchor": "start", "color": INK, "fontWeight": "bold"},
        "axis": {"labelFontSize": 11, "titleFontSize": 11, "gridColor": "#e6e6e6",
                 "domainColor": MUTED, "tickColor": MUTED, "labelColor": INK,
                 "titleColor": INK},
        "legend": {"labelFontSize": 11, "titleFontSize": 11, "orient": "bottom"},
        "range": {"category": list(CATEGORY_COLORS.values()) + ["#8172b2", "#937860"]},
        "line": {"strokeWidth": 2},
        "point": {"size": 40, "filled": True},
        "bar": {"color": CATEGORY_COLORS["use-brain"]},
    }


def scale(meaning: str, domain=None) -> alt.Scale:
    """The colour scale of one meaning of :data:`brainlab.spec.colours.MEANINGS` ("outcome"...).

    ``domain`` keeps only those values, in that order (a value with no colour of its own is
    grey); without it the scale holds every value of the meaning.
    """
    table = colours.MEANINGS[meaning]
    values = list(table) if domain is None else list(domain)
    return alt.Scale(domain=values, range=[table.get(v, colours.NEUTRAL) for v in values])


def count_axis(title: str | None = None, **more) -> alt.Axis:
    """An axis for counts: whole-number ticks only (no 0.5 session), thousands separated."""
    return alt.Axis(title=title, tickMinStep=1, format=",d", **more)


def cut_middle(text: str, width: int = 40) -> str:
    """``text`` cut in the middle to ``width`` characters, its end kept (file names stay visible).

    ``brainlab/a/very/long/folder/metrics.py`` becomes ``brainlab/a/ve…/metrics.py``: a label
    cut at the end hides the one part that tells two paths apart.
    """
    text = str(text)
    if len(text) <= width:
        return text
    tail = text.rsplit("/", 1)[-1]
    keep_end = min(len(tail) + 1, width - max(4, width // 4) - 1) if "/" in text else (width - 1) // 2
    keep_end = max(keep_end, (width - 1) // 2)
    start = width - 1 - keep_end
    return text[:start] + "…" + text[len(text) - keep_end:]


def themed(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """Return ``chart`` with the brainlab theme applied through its own config."""
    cfg = config()
    return chart.properties(background=cfg.pop("background")).configure(**cfg)


def enable() -> str:
    """Register the theme as altair's active theme (interactive notebooks); return its name."""

    @alt.theme.register("brainlab", enable=True)
    def _brainlab() -> alt.theme.ThemeConfig:
        return alt.theme.ThemeConfig(config=config())

    return "brainlab"
