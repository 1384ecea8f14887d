"""DataFrames shown in notebooks the way every brainlab table reads (issue 28 item 9).

A bare DataFrame shows numpy reprs, ``42803.0`` for counts and a 0..n index nobody asked for;
:func:`table` returns a pandas Styler whose cells go through :func:`brainlab.common.tables.format_cell`
(separators, dollars, percentages, dates, one missing marker) with the index hidden.
"""

from __future__ import annotations

import pandas as pd

from brainlab.common.tables import column_kind, format_cell


def table(frame: pd.DataFrame | pd.Series, index: bool = False):
    """``frame`` as a formatted, index-free table for ``display`` (a Series becomes a frame)."""
    if isinstance(frame, pd.Series):
        frame = frame.reset_index()
    shown = frame if index else frame.reset_index(drop=True)
    shown.columns = [str(c) for c in shown.columns]
    formats = {}
    for name in shown.columns:
        kind = column_kind(name, shown[name].tolist())  # Python values: numpy types unwrapped
        formats[name] = lambda value, kind=kind: format_cell(value, kind)
    styler = shown.style.format(formats)
    return styler if index else styler.hide(axis="index")
