"""The tour's pictures (notebook 05): a sprint's source and release maps, a ticket's circuit.

Frames from :mod:`brainlab.metrics.tour` in, altair charts out; colours from
:mod:`brainlab.spec.colours` (released green, kept amber, a miss red; a stop red, a decision
amber, the end in its outcome's colour).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from brainlab.spec import colours
from brainlab.viz import theme

STAGES = ["1 loaded at inhale (§4.2)", "2 referenced in the sprint", "3 expire (§4.3)"]
MAP_COLOURS = {"loaded": colours.CATEGORY["use-brain"], "not loaded": "#e6e6e6",
               "referenced": colours.CATEGORY["use-brain"], "never referenced": colours.BAD,
               "libérer": colours.EXPIRE_ACTION["libérer"],
               "garder": colours.EXPIRE_ACTION["garder"], "miss": colours.BAD}


def source_map(frame: pd.DataFrame, sprint: str) -> alt.Chart:
    """One row per agent and file, three stages left to right: loaded -> referenced -> fate.

    A kept source (``garder``) says why in its tooltip and label; a file referenced but never
    loaded is a miss (the agent read it on demand).
    """
    rows = []
    for item in frame.itertuples():
        label = f"{item.agent} · {theme.cut_middle(item.file, 36)}"
        fate = item.fate if item.fate in ("libérer", "garder") else "miss" if not item.loaded \
            else "kept in context"
        cells = (("loaded" if item.loaded else "not loaded"),
                 ("referenced" if item.referenced else "never referenced"), fate)
        for stage, value in zip(STAGES, cells, strict=True):
            rows.append({"row": label, "stage": stage, "value": value,
                         "reason": item.reason or "", "file": item.file})
    data = pd.DataFrame(rows, columns=["row", "stage", "value", "reason", "file"])
    shown = [v for v in MAP_COLOURS if v in set(data["value"])]
    base = alt.Chart(data, title=f"Sprint {sprint}: source map, then release map").encode(
        x=alt.X("stage:N", sort=STAGES, title=None, axis=alt.Axis(labelAngle=0, orient="top")),
        y=alt.Y("row:N", title=None, sort=None))
    cells = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("value:N", legend=None, scale=alt.Scale(
            domain=shown, range=[MAP_COLOURS[v] for v in shown])),
        tooltip=["row:N", "stage:N", "value:N", "reason:N"])
    text = base.mark_text(fontSize=11).encode(text="value:N", color=alt.value("#222222"))
    return (cells + text).properties(width=540, height=alt.Step(26))


EVENT_LANES = ["step", "review", "stop", "decision", "admission", "end"]


def ticket_timeline(events: pd.DataFrame, ticket: str, outcome: str | None = None) -> alt.Chart:
    """The ticket's events in time, one lane per kind; stops, decisions and the end labelled."""
    data = events.assign(when=pd.to_datetime(events["event_at"]))
    end_colour = colours.OUTCOME.get(outcome or "", colours.NEUTRAL)
    lane_colours = {"step": colours.NEUTRAL, "review": colours.CATEGORY["use-brain"],
                    "stop": colours.BAD, "decision": colours.WATCH,
                    "admission": colours.CATEGORY["explore-brain"], "end": end_colour}
    lanes = [lane for lane in EVENT_LANES if lane in set(data["event"])]
    base = alt.Chart(data, title=f"Ticket {ticket}: its circuit in time (SPEC §6)").encode(
        x=alt.X("when:T", title=None, axis=alt.Axis(format="%d %b %H:%M", labelAngle=0)),
        y=alt.Y("event:N", sort=lanes, title=None))
    points = base.mark_point(filled=True, size=90).encode(
        color=alt.Color("event:N", legend=None, scale=alt.Scale(
            domain=lanes, range=[lane_colours[lane] for lane in lanes])),
        tooltip=["when:T", "event:N", "step:N", "component:N", "label:N"])
    named = base.transform_filter(alt.datum.event != "step").mark_text(
        align="left", dx=8, dy=-9, fontSize=10).encode(text="label:N")
    steps = base.transform_filter(alt.datum.event == "step").mark_text(
        dy=-10, fontSize=9, color=colours.NEUTRAL).encode(text="step:N")
    return (points + named + steps).properties(width=620, height=alt.Step(34))
