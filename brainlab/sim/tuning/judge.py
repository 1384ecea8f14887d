"""Judge alert thresholds on held-out weeks: the engine's alert view (sessions, breath sprints).

A target hands over its units (sessions or sprints) with a week and a label each, and a
function giving the alert vector of any threshold change. :func:`judge_alerts` tries every
one-threshold change of a grid (:mod:`brainlab.sim.tuning.grids`), folds the changes that
alert on exactly the same units together, and decides as :mod:`brainlab.sim.tuning.engine`
states: select on the earlier weeks (forward chaining), confirm on the final block.

The figures (all on the confirm weeks): base rate, precision, recall (Wilson), lift,
alerts per week and informedness (bootstrap over weeks). *Informedness* = recall minus the
false-alarm rate (alerted good units / good units): 0 for alerts that fire at random,
whatever their volume, 1 for alerts that fire on every bad unit and no good one. It is what
a candidate must improve on the defaults, by more than the paired difference's interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from brainlab.sim.tuning import engine
from brainlab.sim.tuning.engine import Board, Figure, clean, ratio
from brainlab.sim.tuning.grids import grid_step, points

QUANTITIES = ("units", "alerts", "labelled", "bad", "tp", "fp", "alerted_labelled")


def _q(board, sums, name):
    return board.q(sums, name)


ALERT_FIGURES = (
    Figure("base_rate", lambda b, s, w: ratio(_q(b, s, "bad"), _q(b, s, "labelled")),
           proportion=("bad", "labelled")),
    Figure("precision", lambda b, s, w: ratio(_q(b, s, "tp"), _q(b, s, "alerted_labelled")),
           proportion=("tp", "alerted_labelled"), better=1),
    Figure("recall", lambda b, s, w: ratio(_q(b, s, "tp"), _q(b, s, "bad")),
           proportion=("tp", "bad"), better=1),
    Figure("lift", lambda b, s, w: ratio(
        ratio(_q(b, s, "tp"), _q(b, s, "alerted_labelled")),
        ratio(_q(b, s, "bad"), _q(b, s, "labelled")))),
    Figure("alerts_per_week", lambda b, s, w: _q(b, s, "alerts") / w),
    Figure("informedness", lambda b, s, w: ratio(_q(b, s, "tp"), _q(b, s, "bad")) - ratio(
        _q(b, s, "fp"), _q(b, s, "labelled") - _q(b, s, "bad")), better=1),
)
SHOWN = ("precision", "recall", "lift", "alerts_per_week", "informedness")


def week_sums(week_of: np.ndarray, n_weeks: int, is_bad: np.ndarray,
              alerts: np.ndarray) -> np.ndarray:
    """(weeks, quantities) counts of one alert vector; units with week -1 are left out."""
    dated = week_of >= 0
    w = week_of[dated]
    bad_known = ~np.isnan(is_bad[dated])
    bad = bad_known & (np.nan_to_num(is_bad[dated]) > 0)
    alert = alerts[dated].astype(bool)
    columns = [np.ones(len(w)), alert, bad_known, bad, alert & bad, alert & bad_known & ~bad,
               alert & bad_known]
    return np.stack([np.bincount(w, weights=np.asarray(c, dtype=float), minlength=n_weeks)
                     for c in columns], axis=1)


def _nearest(values: list, current) -> object:
    numeric = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numeric) == len(values) and isinstance(current, int | float):
        return min(values, key=lambda v: (abs(v - current), v))
    return values[0]


def candidates(grid: dict[str, list], current: dict,
               alert_for: Callable[[dict], np.ndarray]) -> tuple[np.ndarray, list[dict], dict]:
    """Alert vectors of the defaults and each distinct one-threshold change.

    Returns (vectors (candidates, units) with the defaults first, the candidates'
    descriptions, the sweep's bookkeeping: rows tried, identical rows, no-effect names).
    Changes of one threshold that alert on the same units as each other are one candidate
    (its value the one nearest the current value, the others listed in ``same_alerts_for``);
    changes that alert like the defaults are no candidate at all.
    """
    base = np.asarray(alert_for({}), dtype=bool)
    groups: dict[tuple[str, bytes], list] = {}
    vectors: dict[tuple[str, bytes], np.ndarray] = {}
    moved: set[str] = set()
    rows = 0
    seen = {base.tobytes()}
    identical = 0
    for name, value in points(grid, current):
        rows += 1
        vector = np.asarray(alert_for({name: value}), dtype=bool)
        key = (name, vector.tobytes())
        if vector.tobytes() in seen:
            identical += 1
        seen.add(vector.tobytes())
        if np.array_equal(vector, base):
            continue
        moved.add(name)
        groups.setdefault(key, []).append(value)
        vectors[key] = vector
    described, stacked = [], [base]
    for key, values in groups.items():
        name = key[0]
        chosen = _nearest(values, current[name])
        described.append({"name": name, "value": chosen, "changes": {name: chosen},
                          "same_alerts_for": values, "grid_step": grid_step(grid[name])})
        stacked.append(vectors[key])
    no_effect = [name for name in grid if name not in moved]
    sweep = {"rows": rows, "identical_rows": identical, "distinct_alert_sets": len(seen),
             "no_effect": no_effect}
    return np.vstack(stacked), described, sweep


def _pick(board: Board, start: int, stop: int, budget: float) -> int | None:
    """The candidate (> 0) with the best informedness on weeks [start, stop) within budget.

    None when it does not beat the defaults there. Ties: fewer alerts, then grid order.
    """
    values = board.values(board.block(start, stop), stop - start)
    informed = values["informedness"]
    per_week = values["alerts_per_week"]
    best, best_key = None, None
    for c in range(1, len(informed)):
        if not math.isfinite(informed[c]) or per_week[c] > budget:
            continue
        key = (-informed[c], per_week[c], c)
        if best_key is None or key < best_key:
            best, best_key = c, key
    if best is None or not math.isfinite(informed[0]) or informed[best] <= informed[0] + 1e-12:
        return None
    return best


def _figures(row: dict) -> dict:
    return {name: row[name] for name in SHOWN}


def judge_alerts(*, target: str, unit: str, label: dict, weeks: Sequence[str],
                 week_of: np.ndarray, is_bad: np.ndarray,
                 alert_for: Callable[[dict], np.ndarray], grid: dict[str, list],
                 current: dict, budget: float, table: str,
                 confirm_share: float = engine.CONFIRM_SHARE, seed: int = 0) -> dict:
    """Try every one-threshold change of ``grid`` and decide; the result as plain data.

    ``week_of``: each unit's index in ``weeks`` (-1 undated), ``is_bad``: 1, 0 or NaN
    (unlabelled). ``current``: the values in force (the defaults the candidates must beat).
    The keys are the ``--json`` contract of ``brainlab tune`` (docs/tuning.md).
    """
    vectors, described, sweep = candidates(grid, current, alert_for)
    n_weeks = len(weeks)
    sums = np.stack([week_sums(week_of, n_weeks, is_bad, v) for v in vectors])
    board = Board(QUANTITIES, sums, ALERT_FIGURES, seed=seed)
    split = engine.split_weeks(weeks, confirm_share)
    result = {
        "target": target, "unit": unit, "table": table, "label": label,
        "budget": {"alerts_per_week": budget},
        "defaults": {"values": {k: current[k] for k in grid}},
        "candidates": [], "recommended": None, "no_effect": sweep["no_effect"],
        "sweep": {k: v for k, v in sweep.items() if k != "no_effect"},
        "informative": None, "notes": [], "figures": list(SHOWN),
        "objective": "informedness",
    }
    if split is None:
        result["split"] = {"weeks": n_weeks}
        result["base_rate"] = None
        result["reason"] = (f"keep the defaults: the history spans {n_weeks} week(s); tuning "
                            f"needs at least {engine.MIN_FIT_WEEKS + engine.MIN_CONFIRM_WEEKS} "
                            f"({engine.MIN_FIT_WEEKS} to select on, {engine.MIN_CONFIRM_WEEKS} "
                            "to confirm on)")
        return clean(result)
    start, stop = split.selection, n_weeks
    result["split"] = split.describe()
    held = board.held_out(start, stop, range(len(vectors)))
    defaults = held[0]
    result["base_rate"] = defaults["base_rate"]
    result["defaults"].update(_figures(defaults))
    result["defaults"]["counts"] = defaults["counts"]
    for desc, row in zip(described, held[1:], strict=True):
        result["candidates"].append({**desc, **_figures(row),
                                     "difference": _figures(row["difference"]),
                                     "counts": row["counts"]})
    result["split"]["folds"] = _folds(board, split, budget, described)
    lift = defaults["lift"]
    if lift[1] is not None and math.isfinite(lift[1]) and lift[1] <= 1 <= lift[2]:
        result["informative"] = False
        result["notes"].append(
            f"the alerts carry no information about the label: under the defaults their lift "
            f"on the confirm weeks is {_f(lift[0])} [{_f(lift[1])}, {_f(lift[2])}], an "
            "interval that includes 1 (chance)")
    elif math.isfinite(lift[0]):
        result["informative"] = True
    labelled, bad = defaults["counts"]["labelled"], defaults["counts"]["bad"]
    if not labelled:
        result["reason"] = (f"keep the defaults: no {unit} of the confirm weeks carries a "
                            "label (see the label's definition for what one needs)")
        return clean(result)
    if not bad or bad == labelled:
        result["reason"] = (f"keep the defaults: the confirm weeks hold {int(bad)} bad "
                            f"{unit} of {int(labelled)} labelled: nothing to tell apart")
        return clean(result)
    if not described:
        result["reason"] = ("keep the defaults: no threshold in the grid changes which "
                            f"{unit} alert")
        return clean(result)
    picked = _pick(board, 0, start, budget)
    if picked is None:
        result["reason"] = (f"keep the defaults: no candidate within {_f(budget)} alerts per "
                            "week beats the defaults' informedness on the selection weeks "
                            f"({result['split']['selection_weeks']})")
        return clean(result)
    chosen = result["candidates"][picked - 1]
    diff = chosen["difference"]["informedness"]
    name = f"{chosen['name']} = {chosen['value']}"
    result["selected"] = chosen["changes"]
    per_week = chosen["alerts_per_week"][0]
    if not (diff[1] is not None and diff[1] > 0):
        verdict = ("it does worse than the defaults there" if diff[2] is not None
                   and diff[2] < 0 else "the interval includes 0, so it does not beat the "
                   "defaults by more than its uncertainty")
        result["reason"] = (
            f"keep the defaults: {name}, selected on the selection weeks, changes "
            f"informedness on the confirm weeks by {_f(diff[0], True)} [{_f(diff[1], True)}, "
            f"{_f(diff[2], True)}]: {verdict}")
    elif per_week > budget:
        result["reason"] = (f"keep the defaults: {name} beats them but raises "
                            f"{_f(per_week)} alerts per week on the confirm weeks, over the "
                            f"budget of {_f(budget)}")
    else:
        result["recommended"] = chosen["changes"]
        result["reason"] = (
            f"set {name}: selected on the selection weeks, it beats the defaults on the "
            f"confirm weeks (never used for selection) by {_f(diff[0], True)} informedness "
            f"[{_f(diff[1], True)}, {_f(diff[2], True)}], within {_f(budget)} alerts per week")
    return clean(result)


def _folds(board: Board, split: engine.Split, budget: float, described: list[dict]) -> list:
    """Forward chaining within the selection block, and the final fold on the confirm block."""
    folds = []
    for k in split.folds():
        picked = _pick(board, 0, k, budget)
        c = picked or 0
        week = board.values(board.sums[[0, c], k], 1)["informedness"]
        folds.append({"fit": engine.span(split.weeks[:k]), "judge": split.weeks[k],
                      "picked": described[c - 1]["changes"] if picked else None,
                      "informedness_difference": float(week[1] - week[0])})
    picked = _pick(board, 0, split.selection, budget)
    folds.append({"fit": engine.span(split.weeks[:split.selection]),
                  "judge": engine.span(split.weeks[split.selection:]),
                  "picked": described[picked - 1]["changes"] if picked else None})
    return folds


def _f(value, sign: bool = False) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return f"{value:+.3f}" if sign else f"{value:.3g}"
