"""The notebooks' chart renderer: every chart output carries its picture (issue 44 item 3).

Each altair chart a notebook displays becomes one output holding

- the Vega-Lite spec under ``application/vnd.vegalite.v5+json``: JupyterLab draws it with its
  own bundled vega (no network), interactive (tooltips, selections);
- the same chart drawn offline by vl-convert as ``image/svg+xml``: what ``jupyter nbconvert
  --to html``, GitHub's viewer, a papermill output and ``brainlab notebooks export`` show,
  since none of them runs vega;
- a one-line ``text/plain`` (the chart's title) for a terminal.

JupyterLab prefers the spec (its vega renderer ranks above SVG), nbconvert the SVG (it has no
vega renderer): each shows what it can draw. Before this, a chart was altair's
``JupyterChart`` widget: an exported notebook showed an empty gap in its place (the widget's
view needs a widget manager fetched from the network), and panels kept them in ``Output``
widgets whose capture made papermill's engine send on the shell socket mid-cell (issue 44
item 4, :mod:`brainlab.viz.widgets`). :mod:`brainlab.viz` enables this renderer on import.
"""

from __future__ import annotations

import altair as alt

NAME = "brainlab-static"
VEGALITE_MIME = "application/vnd.vegalite.v5+json"  # the newest JupyterLab 4 draws
SVG_MIME = "image/svg+xml"
V5_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"


def title_of(spec: dict) -> str:
    """The chart's title as one line (a layered or concatenated chart: its first title)."""
    title = spec.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    if isinstance(title, list):
        title = " ".join(str(t) for t in title)
    if not title:
        for part in spec.get("layer", []) + spec.get("vconcat", []) + spec.get("hconcat", []):
            title = title_of(part) if isinstance(part, dict) else None
            if title:
                break
    return str(title or "")


def svg_of(spec: dict) -> str:
    """``spec`` drawn offline (vl-convert), refused when it holds active content."""
    import vl_convert

    from brainlab.viz import charts

    return charts.checked(vl_convert.vegalite_to_svg(spec))


def _plain(value):
    """A JSON value for what altair leaves in inline data (``datetime.date`` cells): ISO text."""
    iso = getattr(value, "isoformat", None)
    return iso() if callable(iso) else str(value)


def bundle(spec: dict) -> dict:
    """The MIME bundle of one chart: interactive spec, static SVG, a text line."""
    import json

    spec = json.loads(json.dumps(spec, default=_plain))
    title = title_of(spec)
    return {VEGALITE_MIME: {**spec, "$schema": V5_SCHEMA}, SVG_MIME: svg_of(spec),
            "text/plain": f"<chart: {title}>" if title else "<chart>"}


# While a panel redraws (brainlab.viz.widgets.Panel.refresh), charts go out without their SVG
# first, so JupyterLab redraws at once; the panel then converts them and updates them again.
_deferred: list[dict] | None = None


def static_renderer(spec: dict, **metadata) -> tuple[dict, dict]:
    """Altair renderer: :func:`bundle` of the chart (its metadata is not used)."""
    if _deferred is not None:
        import json

        plain = json.loads(json.dumps(spec, default=_plain))
        _deferred.append(plain)
        title = title_of(plain)
        return {VEGALITE_MIME: {**plain, "$schema": V5_SCHEMA},
                "text/plain": f"<chart: {title}>" if title else "<chart>"}, {}
    return bundle(spec), {}


def deferring():
    """A context in which charts render without SVG; yields the list of their specs."""
    import contextlib

    @contextlib.contextmanager
    def scope():
        global _deferred
        saved, _deferred = _deferred, []
        try:
            yield _deferred
        finally:
            _deferred = saved

    return scope()


def enable() -> str:
    """Register and enable the renderer (idempotent); return its name."""
    if NAME not in alt.renderers.names():
        alt.renderers.register(NAME, static_renderer)
    alt.renderers.enable(NAME)
    return NAME
