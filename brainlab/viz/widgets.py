"""ipywidgets controls for the notebooks: session filters and threshold sliders.

A panel = controls + an ``Output``; every change calls a ``render`` callback (a package function
the notebook passes in), and the panel renders once when built so a papermill run (no clicks)
shows the default view. Charts the callback shows through :func:`show` keep their widget from
one change to the next (only the spec is sent again), so a slider redraws them quickly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import altair as alt
import ipywidgets as w
import pandas as pd
from IPython.display import display

from brainlab.spec.thresholds import Thresholds
from brainlab.viz.explore import filter_sessions
from brainlab.viz.render import chart_widget

# (min, max, step) for every numeric Thresholds field: SPEC §3.3 and §4.4, around the defaults.
THRESHOLD_RANGES: dict[str, tuple[float, float, float]] = {
    "saturation_peak_use": (50, 100, 1), "saturation_peak_build": (50, 100, 1),
    "ratio_window": (3, 30, 1), "ratio_explore_weight": (0, 1, 0.05),
    "ratio_healthy": (0.5, 2.0, 0.05), "ratio_watch": (0.1, 1.5, 0.05),
    "coach_ratio": (0.0, 1.0, 0.05), "coach_health": (0.0, 3.0, 0.05),
    "coach_last_n": (1, 10, 1), "conserve_peak": (30, 100, 1), "conserve_health": (0, 3, 0.05),
    "conserve_close": (20, 100, 1), "cold_start_window": (3, 20, 1),
    "cold_start_stable": (0.5, 1.0, 0.05), "cold_start_watch": (0.3, 0.9, 0.05),
    "always_loaded_share": (0.5, 1.0, 0.05), "little_use_share": (0.0, 0.5, 0.05),
    "context_load_max": (1.0, 5.0, 0.1), "stale_ratio_max": (0.0, 1.0, 0.05),
    "exhale_rate_min": (0.0, 1.0, 0.05), "breath_depth_rising_sprints": (2, 10, 1),
}
CHOICES = {"ratio_window_unit": ["days", "sessions"], "coach_health_mode": ["each", "mean"]}
SPEC_ADDRESS = {  # which SPEC section each field comes from, shown in the slider's label
    **{k: "§3.3" for k in THRESHOLD_RANGES}, "always_loaded_share": "§2.5",
    "little_use_share": "§2.5", "context_load_max": "§4.4", "stale_ratio_max": "§4.4",
    "exhale_rate_min": "§4.4", "breath_depth_rising_sprints": "§4.4",
    **{k: "§3.3" for k in CHOICES},
    # RegulatorRules (brainlab.spec.regulator): SPEC §6.5 limits, §6.3 stop table
    **{k: "§6.5" for k in ("max_relance_same_stop", "max_refusals", "max_fiche_reasks",
                           "max_question_rounds", "max_reviews", "max_regulator_stops",
                           "escalate_without_new_fact")},
    "table_policy": "§6.3",
}
_STYLE = {"description_width": "190px"}
_LAYOUT = w.Layout(width="520px")


class ChartSlots:
    """The chart widgets of one panel, reused in order by each render of the panel."""

    active: ChartSlots | None = None  # the panel being rendered (show() draws into it)

    def __init__(self) -> None:
        self.widgets: list = []
        self.next = 0

    def widget(self, chart: alt.TopLevelMixin):
        """The panel's next chart widget, now drawing ``chart``."""
        spec = chart.to_dict()
        if self.next < len(self.widgets):
            self.widgets[self.next].spec = spec
        else:
            self.widgets.append(chart_widget(spec))
        self.next += 1
        return self.widgets[self.next - 1]

    def render(self, out: w.Output, draw: Callable[[], None]) -> None:
        """Clear ``out`` and run ``draw`` into it with this panel's slots active."""
        self.next, ChartSlots.active = 0, self
        out.clear_output(wait=True)
        try:
            with out:
                draw()
        finally:
            ChartSlots.active = None


def _control(name: str, value) -> w.Widget:
    label = f"{name} ({SPEC_ADDRESS.get(name, '')})"
    if name in CHOICES:
        return w.Dropdown(options=CHOICES[name], value=value, description=label, style=_STYLE,
                          layout=_LAYOUT)
    if isinstance(value, bool):
        return w.Checkbox(value=value, description=label, style=_STYLE, layout=_LAYOUT)
    if isinstance(value, str):
        return w.Text(value=value, description=label, style=_STYLE, layout=_LAYOUT,
                      continuous_update=False)
    low, high, step = THRESHOLD_RANGES.get(name, (0, max(10, 2 * value), 1))
    if isinstance(value, int):
        return w.IntSlider(value=value, min=int(low), max=int(high), step=int(step),
                           description=label, style=_STYLE, layout=_LAYOUT,
                           continuous_update=False)
    return w.FloatSlider(value=value, min=low, max=high, step=step, description=label,
                         style=_STYLE, layout=_LAYOUT, continuous_update=False, readout_format=".2f")


def dataclass_controls(values, fields: Sequence[str] | None = None) -> dict[str, w.Widget]:
    """One control per field of a frozen dataclass instance (Thresholds, RegulatorRules, ...)."""
    names = [f.name for f in dataclasses.fields(values)]
    chosen = [n for n in names if fields is None or n in fields]
    return {name: _control(name, getattr(values, name)) for name in chosen}


def threshold_panel(render: Callable[[Thresholds], None], base: Thresholds | None = None,
                    fields: Sequence[str] | None = None, columns: int = 1) -> w.Widget:
    """Sliders for ``fields`` of ``base``; each change calls ``render(thresholds)`` into an Output.

    ``base`` may be any frozen dataclass with a ``replace(**changes)`` method, e.g. a
    :class:`brainlab.spec.regulator.RegulatorRules` for the SPEC §6.5 limits.
    """
    base = base or Thresholds()
    controls = dataclass_controls(base, fields)
    out, slots = w.Output(), ChartSlots()

    def update(_change=None) -> None:
        chosen = base.replace(**{k: c.value for k, c in controls.items()})
        slots.render(out, lambda: render(chosen))

    for control in controls.values():
        control.observe(update, names="value")
    update()
    items = list(controls.values())
    grid = w.GridBox(items, layout=w.Layout(grid_template_columns=" ".join(
        ["540px"] * columns))) if columns > 1 else w.VBox(items)
    return w.VBox([grid, out])


def session_filter_controls(sessions: pd.DataFrame) -> dict[str, w.Widget]:
    """Date range (by day), session type and project pickers over the sessions present."""
    days = sorted(pd.to_datetime(sessions["started_at"]).dt.date.unique())
    if not days:
        days = [pd.Timestamp("today").date()]
    types = sorted(sessions["type"].dropna().unique())
    projects = sorted(sessions["project"].fillna("(none)").unique())
    return {
        "dates": w.SelectionRangeSlider(options=[(d.isoformat(), d) for d in days],
                                        index=(0, len(days) - 1), description="dates",
                                        style=_STYLE, layout=w.Layout(width="760px")),
        "types": w.SelectMultiple(options=types, value=(), description="types (none = all)",
                                  style=_STYLE, rows=min(8, max(2, len(types)))),
        "projects": w.SelectMultiple(options=projects, value=(),
                                     description="projects (none = all)", style=_STYLE,
                                     rows=min(6, max(2, len(projects)))),
    }


def filter_panel(sessions: pd.DataFrame, render: Callable[[pd.DataFrame, dict], None]) -> w.Widget:
    """Filters over ``sessions``; each change calls ``render(filtered, choices)`` into an Output.

    ``choices`` holds start, end (dates), types and projects (tuples, empty = all).
    """
    controls = session_filter_controls(sessions)
    out, slots = w.Output(), ChartSlots()

    def update(_change=None) -> None:
        start, end = controls["dates"].value
        choices = {"start": start, "end": end, "types": tuple(controls["types"].value),
                   "projects": tuple(controls["projects"].value)}
        filtered = filter_sessions(sessions, **choices)
        slots.render(out, lambda: render(filtered, choices))

    for control in controls.values():
        control.observe(update, names="value")
    update()
    return w.VBox([controls["dates"], w.HBox([controls["types"], controls["projects"]]), out])


def show(*objects) -> None:
    """Display charts/frames inside a panel's render callback (charts reuse the panel's widgets)."""
    slots = ChartSlots.active
    for obj in objects:
        if slots is not None and isinstance(obj, alt.TopLevelMixin):
            display(slots.widget(obj))
        else:
            display(obj)
