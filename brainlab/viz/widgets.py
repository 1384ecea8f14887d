"""ipywidgets controls for the notebooks: session filters and threshold sliders.

A :class:`Panel` = controls + the outputs of a ``render`` callback (a package function the
notebook passes in); the panel renders once when built so a papermill run (no clicks) records
the default view, and each change renders again into the same outputs (display ids). No
``ipywidgets.Output`` anywhere: see :class:`Panel` for why (issue 44 item 4).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import ipywidgets as w
import pandas as pd
from IPython.display import display

from brainlab.spec.thresholds import Thresholds
from brainlab.viz.explore import filter_sessions

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


class _Text:
    """``sys.stdout`` while a panel renders: printed text becomes one item (consecutive joined)."""

    def __init__(self, items: list) -> None:
        self.items = items

    def write(self, text: str) -> int:
        if self.items and self.items[-1][0].keys() == {"text/plain"} and self.items[-1][2]:
            data = self.items[-1][0]
            data["text/plain"] += text
        else:
            self.items.append(({"text/plain": text}, {}, True))
        return len(text)

    def flush(self) -> None:
        """Nothing to flush: the text is kept until the panel shows it."""


class _Publisher:
    """The shell's display publisher while a panel renders: each display becomes one item."""

    def __init__(self, items: list) -> None:
        self.items = items

    def publish(self, data, metadata=None, source=None, *, transient=None, update=False,
                **kwargs) -> None:
        self.items.append((dict(data), dict(metadata or {}), False))

    def clear_output(self, wait: bool = False) -> None:
        self.items.clear()


def capture(draw: Callable[[], None]) -> list[tuple[dict, dict]]:
    """What ``draw()`` prints and displays, in order, as (data, metadata) MIME bundles.

    Nothing is sent to the frontend: the panel shows the items itself. No ``Output`` widget
    captures them, so nbclient (papermill's engine) never mimics one (below).
    """
    import sys

    from IPython import get_ipython

    items: list = []
    shell = get_ipython()
    saved_out, saved_pub = sys.stdout, getattr(shell, "display_pub", None)
    sys.stdout = _Text(items)
    if shell is not None:
        shell.display_pub = _Publisher(items)
    try:
        draw()
    finally:
        sys.stdout = saved_out
        if shell is not None:
            shell.display_pub = saved_pub
    return [(data, meta) for data, meta, _text in items]


EMPTY = {"text/plain": ""}


def _merged(items: list[tuple[dict, dict]]) -> tuple[dict, dict]:
    """Several items as one bundle (a render that shows more than the panel has places for)."""
    import base64
    import html

    parts, texts = [], []
    for data, _meta in items:
        texts.append(str(data.get("text/plain", "")))
        if "text/html" in data:
            parts.append(str(data["text/html"]))
        elif "image/svg+xml" in data:
            encoded = base64.b64encode(str(data["image/svg+xml"]).encode()).decode()
            parts.append(f'<img src="data:image/svg+xml;base64,{encoded}">')
        else:
            parts.append(f"<pre>{html.escape(texts[-1])}</pre>")
    return {"text/html": "\n".join(parts), "text/plain": "\n".join(texts)}, {}


def _with_svg(data: dict) -> dict:
    """A chart bundle sent without its SVG (a panel's redraw), completed."""
    from brainlab.viz import render

    if render.VEGALITE_MIME not in data or render.SVG_MIME in data:
        return data
    spec = {k: v for k, v in data[render.VEGALITE_MIME].items() if k != "$schema"}
    return {**data, render.SVG_MIME: render.svg_of(spec)}


class Panel:
    """Controls above the outputs they drive, redrawn in place on each change.

    The first render happens when the panel is built (what a papermill run records); showing
    the panel displays the controls, then each item the render printed or displayed as an
    output of the cell with a display id; a change renders again and updates those outputs
    (``update_display_data``), so charts stay ordinary outputs: each carries its static SVG
    (:mod:`brainlab.viz.render`) and an exported notebook shows the default view.

    Why no ``ipywidgets.Output`` (issue 44 item 4): nbclient, papermill's engine, mimics a
    frontend's Output widget: each output captured into one is sent back to the kernel as a
    ``comm_msg`` on the shell channel, while the same client waits for the cell's
    ``execute_reply`` on that socket. jupyter_client sends through a plain (synchronous)
    shadow of the ``zmq.asyncio`` socket, so pyzmq's event bookkeeping never hears of the send;
    the send processes the socket's pending commands, which consumes the edge that announced a
    reply already delivered, and the waiting poll is never woken: papermill waits forever on
    an idle kernel. No Output widget, no send, no missed reply
    (tests/test_notebook_runners.py).
    """

    def __init__(self, controls: w.Widget, draw: Callable[[], None]) -> None:
        self.controls = controls
        self._draw = draw
        self._handles: list = []
        self.items = capture(draw)

    @property
    def children(self) -> tuple:
        """The controls, as a widget container's children (code walking widget trees)."""
        return (self.controls,)

    def refresh(self, _change=None) -> None:
        """Render again; the outputs already shown take the new items.

        The charts go out first without their SVG (JupyterLab draws the spec at once), then
        again with it, so a notebook saved in the lab still exports every chart.
        """
        from brainlab.viz import render

        if not self._handles:
            self.items = capture(self._draw)
            return
        with render.deferring() as specs:
            self.items = capture(self._draw)
        self._show(self.items)
        if specs:
            self.items = [(_with_svg(data), meta) for data, meta in self.items]
            self._show(self.items)

    def _show(self, items: list) -> None:
        items = list(items)
        if len(items) > len(self._handles):
            keep = len(self._handles) - 1
            items = items[:keep] + [_merged(items[keep:])]
        for number, handle in enumerate(self._handles):
            data, meta = items[number] if number < len(items) else (EMPTY, {})
            handle.update(data, metadata=meta, raw=True)

    def _ipython_display_(self) -> None:
        if widget_frontend():
            display(self.controls)
        else:  # papermill, nbconvert --execute, nbclient: no widget manager will ever draw them
            display(static_controls(self.controls), raw=True)
        self._handles = [display(data, metadata=meta, raw=True, display_id=True)
                         for data, meta in (self.items or [(EMPTY, {})])]


WIDGETS_ENV = "BRAINLAB_WIDGETS"  # 1: always show the controls as widgets; 0: never
# What JupyterLab and Notebook 7 put in the metadata of each execute_request (Run, Run All);
# nbclient (papermill's engine, `jupyter nbconvert --execute`) sends only the cell's id.
LAB_REQUEST_KEYS = ("deletedCells", "recordTiming")


def _request_metadata() -> dict:
    """The metadata of the execute_request the kernel is answering ({} outside a kernel)."""
    from IPython import get_ipython

    get_parent = getattr(getattr(get_ipython(), "kernel", None), "get_parent", None)
    if get_parent is None:
        return {}
    try:
        parent = get_parent("shell")
    except TypeError:  # an ipykernel whose get_parent takes no channel
        parent = get_parent()
    return (parent or {}).get("metadata") or {}


def widget_frontend() -> bool:
    """True when the cell runs in a frontend that draws widgets (JupyterLab, Notebook 7).

    Such a frontend says so in each execute_request (:data:`LAB_REQUEST_KEYS` in its
    metadata), and a widget manager that connects after ipywidgets was imported opens the
    ``jupyter.widget.control`` comm, which ipywidgets keeps. papermill's engine,
    ``jupyter nbconvert --execute`` and nbclient do neither: their executed notebook would keep
    a widget view (with its state) that stock ``nbconvert --to html`` can only draw with a
    widget manager fetched from the network, an empty output area offline; they get
    :func:`static_controls`. ``BRAINLAB_WIDGETS=1`` (another frontend with widgets: VS Code)
    or ``0`` decides instead.
    """
    import os

    forced = os.environ.get(WIDGETS_ENV, "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    if getattr(w.Widget, "_control_comm", None) is not None:
        return True
    return any(key in _request_metadata() for key in LAB_REQUEST_KEYS)


def _leaves(widget: w.Widget) -> list[w.Widget]:
    children = getattr(widget, "children", None)
    if children:
        return [leaf for child in children for leaf in _leaves(child)]
    return [widget] if hasattr(widget, "value") else []


def _value_text(value) -> str:
    if isinstance(value, tuple):
        if not value:
            return "all"
        return " to ".join(str(v) for v in value) if len(value) == 2 and not isinstance(
            value[0], str) else ", ".join(str(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def static_controls(controls: w.Widget) -> dict:
    """The controls as one line of text (HTML and plain): each one's label and current value.

    What a panel shows in place of its controls where no widget manager runs (see
    :func:`widget_frontend`): the reader of an exported notebook sees which values the outputs
    below were drawn with, and where to move them.
    """
    import html

    pairs = [(str(c.description or type(c).__name__), _value_text(c.value))
             for c in _leaves(controls)]
    plain = "; ".join(f"{name} = {value}" for name, value in pairs)
    items = "; ".join(f"<code>{html.escape(name)}</code> = {html.escape(value)}"
                      for name, value in pairs)
    lead = "Drawn with"
    tail = "(controls in JupyterLab: <code>brainlab lab</code>)"
    return {"text/html": f"<p>{lead} {items} {tail}</p>",
            "text/plain": f"{lead} {plain} (controls in JupyterLab: `brainlab lab`)"}


def watch(controls: Sequence[w.Widget], panel: Panel) -> Panel:
    """Re-render ``panel`` whenever one of ``controls`` changes value; return the panel."""
    for control in controls:
        control.observe(panel.refresh, names="value")
    return panel


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
                    fields: Sequence[str] | None = None, columns: int = 1) -> Panel:
    """Sliders for ``fields`` of ``base``; each change calls ``render(thresholds)`` into an Output.

    ``base`` may be any frozen dataclass with a ``replace(**changes)`` method, e.g. a
    :class:`brainlab.spec.regulator.RegulatorRules` for the SPEC §6.5 limits.
    """
    base = base or Thresholds()
    controls = dataclass_controls(base, fields)
    items = list(controls.values())
    grid = w.GridBox(items, layout=w.Layout(grid_template_columns=" ".join(
        ["540px"] * columns))) if columns > 1 else w.VBox(items)

    def draw() -> None:
        render(base.replace(**{k: c.value for k, c in controls.items()}))

    return watch(items, Panel(grid, draw))


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


def filter_panel(sessions: pd.DataFrame, render: Callable[[pd.DataFrame, dict], None]) -> Panel:
    """Filters over ``sessions``; each change calls ``render(filtered, choices)`` into an Output.

    ``choices`` holds start, end (dates), types and projects (tuples, empty = all).
    """
    controls = session_filter_controls(sessions)

    def draw() -> None:
        start, end = controls["dates"].value
        choices = {"start": start, "end": end, "types": tuple(controls["types"].value),
                   "projects": tuple(controls["projects"].value)}
        render(filter_sessions(sessions, **choices), choices)

    box = w.VBox([controls["dates"], w.HBox([controls["types"], controls["projects"]])])
    return watch(list(controls.values()), Panel(box, draw))


def show(*objects) -> None:
    """Display charts/frames inside a panel's render callback (each one output of the panel)."""
    for obj in objects:
        display(obj)


def sliders_panel(render: Callable[..., None], **ranges: tuple) -> Panel:
    """Integer sliders ``name=(low, high, value)``; each change calls ``render(**values)``.

    The panel form of ``ipywidgets.interactive`` (which captures into an Output widget).
    """
    controls = {name: w.IntSlider(value=value, min=low, max=high, description=name,
                                  style=_STYLE, layout=_LAYOUT, continuous_update=False)
                for name, (low, high, value) in ranges.items()}

    def draw() -> None:
        render(**{name: c.value for name, c in controls.items()})

    return watch(list(controls.values()), Panel(w.VBox(list(controls.values())), draw))

