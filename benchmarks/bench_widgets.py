"""How long a slider move takes in the kernel: notebook 04's session-threshold panel and 01's filters.

Run: PYTHONPATH=. python benchmarks/bench_widgets.py [--db data/demo/brainlab.duckdb] [--moves 5]

For each panel, moves one control ``--moves`` times (each move recomputes in SQL and draws the
panel's charts as the kernel's renderer does: the Vega-Lite spec and its SVG) and prints the
range of seconds per move; the baseline is the same move computing the figures only (no chart
built or sent), so the difference is the cost of drawing. This is the kernel's share, without a
browser; the end-to-end time (slider moved in Chromium until the chart changed) is printed by
tests/test_lab_browser.py (`pytest -s`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import time

from benchkit import emit

from brainlab import metrics
from brainlab.lab import ensure_demo_db
from brainlab.sim import tuning
from brainlab.spec.thresholds import Thresholds
from brainlab.viz import explore, render, widgets

ALERT_ON = ["coach_triggered", "is_inefficient", "recommend_conserve_next", "is_narcissistic"]


def _moves(control, values) -> list[float]:
    times = []
    for value in values:
        start = time.perf_counter()
        control.value = value
        times.append(time.perf_counter() - start)
    return times


def _controls(panel):
    found = []
    for child in getattr(panel, "children", ()):
        found += [child] if hasattr(child, "description") else _controls(child)
    return found


def bench(db: str, moves: int, draw: bool) -> dict[str, list[float]]:
    spec = Thresholds()
    labels = tuning.outcomes(db)
    def show(*charts):  # what the kernel's renderer does with each chart: spec + SVG bundle
        for chart in charts if draw else ():
            render.bundle(chart.to_dict())

    def render_signals(t):
        signals = metrics.signals(db, t)
        tuning.evaluate(db, t, ALERT_ON, labels=labels, signals=signals)
        weekly = tuning.weekly_alerts(db, t, ALERT_ON, labels=labels, signals=signals)
        show(*([explore.alerts_per_week(weekly, ALERT_ON)] if draw else []))

    sessions = metrics.sessions(db)
    signals = metrics.signals(db, spec)

    def render_filter(filtered, choices):
        in_range = explore.filter_sessions(signals, choices["start"], choices["end"])
        if draw:
            show(explore.health_by_category(filtered), explore.ratio_bands(in_range, spec),
                 explore.tokens_vs_output(filtered))

    with contextlib.redirect_stdout(io.StringIO()):
        panel04 = widgets.threshold_panel(render_signals, spec, sorted(tuning.SIGNAL_FIELDS))
        ratio = next(c for c in _controls(panel04.controls) if c.description.startswith("coach_ratio"))
        t04 = _moves(ratio, [0.45 + 0.05 * i for i in range(moves)])
        panel01 = widgets.filter_panel(sessions, render_filter)
        dates = next(c for c in _controls(panel01.controls) if c.description == "dates")
        last = len(dates.options) - 1
        t01 = _moves(dates, [(dates.options[0][1], dates.options[last - 7 * (i + 1)][1])
                             for i in range(moves)])
    return {"04 coach_ratio": t04, "01 dates": t01}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default=None)
    parser.add_argument("--moves", type=int, default=5)
    args = parser.parse_args()
    db = args.db or str(ensure_demo_db())
    bench(db, 1, True)  # warm: imports, the JavaScript bundle, DuckDB caches
    best = {}
    for label, reuse in (("baseline: figures only", False), ("figures + charts drawn", True)):
        for panel, times in bench(db, args.moves, reuse).items():
            print(f"{label:32s} {panel:15s} {min(times):.3f}-{max(times):.3f} s per move")
            best[f"{label}: {panel}"] = min(times)
    emit("widgets", moves=args.moves, min_s_per_move=best)


if __name__ == "__main__":
    main()
