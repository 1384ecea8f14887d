"""Altair chart builders and ipywidgets controls (DataFrames in, charts out; no metric computed here).

Importing the package enables the offline chart renderer (:mod:`brainlab.viz.render`), so
every notebook that uses brainlab.viz draws its charts with no network.
"""

from brainlab.viz import render as _render

_render.enable()
