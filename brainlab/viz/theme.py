"""One look for every brainlab chart: fonts, palette, sizes (altair config, no data logic).

:func:`themed` applies the theme to a chart explicitly (no global altair state is needed
for reports); :func:`enable` makes it altair's active theme for interactive notebooks.
"""

from __future__ import annotations

import altair as alt

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
WIDTH = 640
HEIGHT = 220

# Metabolism categories (SPEC §2.2) and signal colours, used consistently in every chart.
CATEGORY_COLORS = {
    "use-brain": "#2f7ed8",
    "build-brain": "#d9822b",
    "explore-brain": "#55a868",
}
BAND_COLORS = {"healthy": "#55a868", "watch": "#e0b000", "narcissistic-loop": "#c44e52"}
ALERT = "#c44e52"
MUTED = "#8c8c8c"
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
