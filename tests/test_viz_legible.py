"""Issue 28 item 11: notebook 01's agent chart and the notebooks' controls read whole.

Before: 8 agents drawn with the theme's 5 category colours (two agents, one colour), legend
labels cut, and slider or selector labels cut at ipywidgets' default description width.
"""

from __future__ import annotations

import pandas as pd

from brainlab.viz import audit_charts, explore, widgets


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def test_eight_agents_get_eight_colours_and_whole_legend_labels():
    agents = [f"agent-with-a-rather-long-name-{i}" for i in range(8)]
    weekly = pd.DataFrame({"agent": agents * 2, "iso_week": ["2026-W01"] * 8 + ["2026-W02"] * 8,
                           "week_start": pd.to_datetime(["2025-12-29"] * 8 + ["2026-01-05"] * 8),
                           "sessions_loaded": 1, "tokens_total": range(16)})
    color = explore.agent_cost_trend(weekly, agents).to_dict()["encoding"]["color"]
    assert color["scale"]["domain"] == agents
    assert len(set(color["scale"]["range"])) == len(agents)
    assert color["legend"]["labelLimit"] == 0


def test_every_labelled_control_has_room_for_its_label():
    sessions = pd.DataFrame({"started_at": pd.to_datetime(["2026-01-01", "2026-01-09"]),
                             "type": ["work", "brain"], "project": ["p", None]})
    panels = [widgets.filter_panel(sessions, lambda rows, choices: None),
              audit_charts.audit_panel(lambda tol: pd.DataFrame(), ["tokens_used"], ["work"],
                                       lambda rows, choices: None)]
    labelled = [w for panel in panels for w in _walk(panel) if getattr(w, "description", "")]
    assert len(labelled) >= 6
    cut = [w.description for w in labelled if not w.style.description_width]
    assert cut == [], cut


def test_context_at_close_reads_in_the_units_of_context_peak_pct():
    """``context_peak_pct 86%`` beside ``context_at_close 21.40``: both percentages now."""
    from brainlab.report.sections import table

    html = table(pd.DataFrame({"context_peak_pct": [86.0], "context_at_close": [21.4]}))
    assert ">86%<" in html and ">21%<" in html
