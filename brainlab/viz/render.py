"""The notebooks' chart renderer: altair charts as offline ``JupyterChart`` widgets.

Altair's default renderer loads vega from a CDN, so charts stay blank without network and
leak a request to a third party. This renderer displays each chart as altair's
``JupyterChart`` widget in offline mode, whose JavaScript (vega, vega-lite, vega-embed) comes
bundled from the installed vl-convert; the chart stays interactive (tooltips, selections).
The Vega-Lite spec rides along in the same output under its own mimetype, so an executed
notebook (papermill, nbconvert) still holds the chart. :mod:`brainlab.viz` enables it on
import: a notebook needs no set-up cell.
"""

from __future__ import annotations

import altair as alt

NAME = "brainlab-offline"
VEGALITE_MIME = "application/vnd.vegalite.v6+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def chart_widget(spec: dict, embed_options: dict | None = None):
    """An offline ``JupyterChart`` drawing the Vega-Lite ``spec`` (a validated chart dict).

    The spec goes to the widget as is: a chart rebuilt by ``Chart.from_dict`` would be
    validated twice more (~0.5 s per chart); the browser still gets every tooltip and
    selection of the spec. Setting ``widget.spec`` later redraws the same widget.
    """
    from altair import JupyterChart

    JupyterChart.enable_offline(True)  # bundles the JavaScript once per kernel
    widget = JupyterChart(chart=None, embed_options=embed_options)
    widget.spec = spec
    return widget


def offline_renderer(spec: dict, **metadata) -> tuple[dict, dict]:
    """Mimebundle of one chart: the offline JupyterChart widget view plus the Vega-Lite spec."""
    widget = chart_widget(spec, metadata.get("embed_options"))
    bundle = widget._repr_mimebundle_()  # anywidget: (data, metadata)
    data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
    return {**data, VEGALITE_MIME: spec}, meta


def enable() -> str:
    """Register and enable the offline renderer (idempotent); return its name."""
    if NAME not in alt.renderers.names():
        alt.renderers.register(NAME, offline_renderer)
    alt.renderers.enable(NAME)
    return NAME
