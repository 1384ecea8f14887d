"""A panel's outputs (brainlab.viz.widgets.Panel): charts as cell outputs carrying their SVG.

Run in an IPython shell (the display machinery a kernel has), no kernel: the first render is
captured when the panel is built; a change updates the outputs shown, charts first without
their SVG (JupyterLab redraws the spec at once), then with it (a saved notebook exports them).
"""

from __future__ import annotations

import altair as alt
import ipywidgets as w
import pandas as pd
import pytest

from brainlab.viz import render, widgets


class Handle:
    """Stands in for IPython's DisplayHandle: records each update of one output."""

    def __init__(self) -> None:
        self.updates: list[dict] = []

    def update(self, data, metadata=None, raw=False) -> None:
        self.updates.append(data)


@pytest.fixture(scope="module")
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    return InteractiveShell.instance()


def test_a_panel_renders_charts_with_their_svg_and_redraws_in_two_steps(shell):
    slider = w.IntSlider(value=3, min=1, max=9)

    def draw():
        print("n =", slider.value)
        widgets.show(alt.Chart(pd.DataFrame({"x": range(slider.value)}))
                     .mark_bar().encode(x="x:O"))

    panel = widgets.watch([slider], widgets.Panel(slider, draw))
    (text, _), (chart, _) = panel.items
    assert text == {"text/plain": "n = 3\n"}
    assert render.SVG_MIME in chart and render.VEGALITE_MIME in chart
    panel._handles = [Handle(), Handle()]  # what _ipython_display_ keeps
    slider.value = 5
    said, drawn = panel._handles
    assert [u["text/plain"] for u in said.updates] == ["n = 5\n", "n = 5\n"]
    first, second = drawn.updates
    assert render.SVG_MIME not in first and render.VEGALITE_MIME in first
    assert second[render.SVG_MIME].startswith("<svg")
    rows = next(iter(first[render.VEGALITE_MIME]["datasets"].values()))
    assert len(rows) == 5
    assert render._deferred is None  # the deferral ends with the redraw


def test_a_render_with_more_items_than_outputs_merges_the_rest_into_the_last(shell):
    count = {"n": 1}

    def draw():
        for i in range(count["n"]):
            print(f"line {i}")
            widgets.show(pd.DataFrame({"i": [i]}))

    panel = widgets.Panel(w.IntSlider(), draw)
    panel._handles = [Handle() for _ in panel.items]
    count["n"] = 3
    panel.refresh()
    last = panel._handles[-1].updates[-1]
    assert "text/html" in last and "line 2" in last["text/plain"]


def test_without_a_widget_manager_the_controls_show_as_a_line_of_text(shell, monkeypatch):
    """papermill / nbclient (no JupyterLab metadata, no control comm): a panel displays its
    controls' labels and values, not a widget view (an empty area in stock nbconvert HTML)."""
    from brainlab.spec.thresholds import Thresholds

    shown: list[dict] = []
    monkeypatch.setattr(widgets, "display",
                        lambda obj, raw=False, **kw: shown.append(obj) or Handle())
    panel = widgets.threshold_panel(lambda t: print(t.coach_ratio), Thresholds(),
                                    ["coach_ratio", "coach_last_n"])
    monkeypatch.delenv(widgets.WIDGETS_ENV, raising=False)
    assert not widgets.widget_frontend()
    panel._ipython_display_()
    line = shown[0]
    assert set(line) == {"text/html", "text/plain"}
    assert "coach_ratio (§3.3) = 0.4" in line["text/plain"]
    assert "coach_last_n (§3.3) = 3" in line["text/plain"]
    assert "<code>coach_ratio (§3.3)</code> = 0.4" in line["text/html"]
    monkeypatch.setenv(widgets.WIDGETS_ENV, "1")  # a frontend that draws widgets
    shown.clear()
    panel._ipython_display_()
    assert shown[0] is panel.controls
