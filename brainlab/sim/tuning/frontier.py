"""Judge regulator rule sets by what a practitioner pays and gets: the engine's frontier view.

No label: a rule set is not scored by agreement with the rules the journals followed (those
would score perfectly by construction). Each rule set is replayed
(:func:`brainlab.sim.regulator.replay`) and read on five figures per ISO week of the
tickets' start, SPEC §6.6:

- ``integrated_share``: tickets integrated / tickets (Wilson), higher is better;
- ``sessions_per_integrated`` and ``tokens_per_integrated``: sessions and tokens spent on
  every ticket / tickets integrated (bootstrap over weeks), lower is better;
- ``wakeups_per_week``: supervisor wake-ups (MONTE, code 18, endings) per week (bootstrap),
  lower is better;
- ``abandoned_share``: tickets the circuit ended without integration / tickets (Wilson),
  lower is better.

A candidate is *better* when it is on the better side of the defaults' frontier: selected
on the selection weeks among the candidates no worse on any figure and better on one (the
fewest sessions per integrated ticket first), it is recommended when, on the confirm weeks,
no figure's difference interval lies wholly on the worse side and at least one lies wholly
on the better side, within the wake-up budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from brainlab.sim.tuning import engine
from brainlab.sim.tuning.engine import Board, Figure, clean, ratio
from brainlab.sim.tuning.grids import grid_step, points

QUANTITIES = ("tickets", "integrated", "sessions", "tokens", "wakeups", "ended")
FIGURES = (
    Figure("integrated_share", lambda b, s, w: ratio(b.q(s, "integrated"), b.q(s, "tickets")),
           proportion=("integrated", "tickets"), better=1),
    Figure("sessions_per_integrated",
           lambda b, s, w: ratio(b.q(s, "sessions"), b.q(s, "integrated")), better=-1),
    Figure("tokens_per_integrated",
           lambda b, s, w: ratio(b.q(s, "tokens"), b.q(s, "integrated")), better=-1),
    Figure("wakeups_per_week", lambda b, s, w: b.q(s, "wakeups") / w, better=-1),
    Figure("abandoned_share", lambda b, s, w: ratio(b.q(s, "ended"), b.q(s, "tickets")),
           proportion=("ended", "tickets"), better=-1),
)
SHOWN = tuple(f.name for f in FIGURES)
RANK_BY = "sessions_per_integrated"


def week_sums(per: pd.DataFrame, week_of: np.ndarray, n_weeks: int) -> np.ndarray:
    """(weeks, quantities) of one rule set's per-ticket replay (rows aligned with week_of)."""
    dated = week_of >= 0
    columns = [np.ones(len(per)), (per["outcome"] == "integrated").to_numpy(),
               per["sessions"].fillna(0).to_numpy(), per["tokens"].fillna(0).to_numpy(),
               per["wakeups"].fillna(0).to_numpy(), (per["outcome"] == "ended").to_numpy()]
    return np.stack([np.bincount(week_of[dated], weights=np.asarray(c, dtype=float)[dated],
                                 minlength=n_weeks) for c in columns], axis=1)


def _dominates(values: dict, c: int) -> bool:
    """Candidate c no worse than the defaults (0) on every figure, better on one."""
    strictly = False
    for fig in FIGURES:
        mine, base = values[fig.name][c], values[fig.name][0]
        if not (math.isfinite(mine) and math.isfinite(base)):
            return False
        gain = (mine - base) * fig.better
        if gain < -1e-12:
            return False
        strictly = strictly or gain > 1e-12
    return strictly


def _pick(board: Board, start: int, stop: int, budget: float) -> int | None:
    values = board.values(board.block(start, stop), stop - start)
    fits = [c for c in range(1, len(values[RANK_BY]))
            if values["wakeups_per_week"][c] <= budget and _dominates(values, c)]
    if not fits:
        return None
    return min(fits, key=lambda c: (values[RANK_BY][c], c))


def judge_frontier(*, label: dict, weeks: Sequence[str], week_of: np.ndarray,
                   replayed: Callable[[list[dict]], list[pd.DataFrame]],
                   grid: dict[str, list], current: dict, budget: float,
                   confirm_share: float = engine.CONFIRM_SHARE, seed: int = 0) -> dict:
    """Try every one-rule change of ``grid``; decide on the frontier. Plain data out.

    ``replayed(changes_list)``: per-ticket replay frames (ticket order of ``week_of``) of
    each change set, the defaults ``{}`` included, in one paired replay.
    """
    tried = [{}, *({name: value} for name, value in points(grid, current))]
    frames = replayed(tried)
    keyed = {}
    for changes, frame in zip(tried, frames, strict=True):
        key = frame[["outcome", "sessions", "wakeups"]].round(6).to_csv(index=False)
        keyed.setdefault(key, []).append(changes)
    base_key = next(iter(keyed))
    moved, described, vectors = set(), [], [frames[0]]
    groups: dict[tuple[str, str], list] = {}
    frame_of: dict[tuple[str, str], pd.DataFrame] = {}
    for changes, frame in zip(tried[1:], frames[1:], strict=True):
        (name, value), = changes.items()
        key = frame[["outcome", "sessions", "wakeups"]].round(6).to_csv(index=False)
        if key == base_key:
            continue
        moved.add(name)
        groups.setdefault((name, key), []).append(value)
        frame_of[(name, key)] = frame
    for (name, key), values in groups.items():
        chosen = values[0] if len(values) == 1 or not all(
            isinstance(v, int | float) for v in values) else min(
            values, key=lambda v: (abs(v - current[name]), v))
        described.append({"name": name, "value": chosen, "changes": {name: chosen},
                          "same_outcomes_for": values, "grid_step": grid_step(grid[name])})
        vectors.append(frame_of[(name, key)])
    n_weeks = len(weeks)
    sums = np.stack([week_sums(f, week_of, n_weeks) for f in vectors])
    board = Board(QUANTITIES, sums, FIGURES, seed=seed)
    split = engine.split_weeks(weeks, confirm_share)
    result = {
        "target": "tickets", "unit": "tickets", "table": "regulator", "label": label,
        "budget": {"wakeups_per_week": budget},
        "defaults": {"values": {k: current[k] for k in grid}}, "candidates": [],
        "recommended": None, "no_effect": [k for k in grid if k not in moved],
        "sweep": {"rows": len(tried) - 1,
                  "identical_rows": len(tried) - len(keyed),
                  "distinct_alert_sets": len(keyed)},
        "figures": list(SHOWN), "objective": None, "notes": [],
    }
    if split is None:
        result["split"] = {"weeks": n_weeks}
        result["reason"] = (f"keep the defaults: the tickets span {n_weeks} week(s); tuning "
                            f"needs at least {engine.MIN_FIT_WEEKS + engine.MIN_CONFIRM_WEEKS}")
        return clean(result)
    start = split.selection
    result["split"] = split.describe()
    held = board.held_out(start, n_weeks, range(len(vectors)))
    result["defaults"].update({f: held[0][f] for f in SHOWN})
    result["defaults"]["counts"] = held[0]["counts"]
    for desc, row in zip(described, held[1:], strict=True):
        result["candidates"].append({**desc, **{f: row[f] for f in SHOWN},
                                     "difference": {f: row["difference"][f] for f in SHOWN},
                                     "counts": row["counts"]})
    folds = []
    for k in split.folds():
        picked = _pick(board, 0, k, budget)
        folds.append({"fit": engine.span(split.weeks[:k]), "judge": split.weeks[k],
                      "picked": described[picked - 1]["changes"] if picked else None})
    picked = _pick(board, 0, start, budget)
    folds.append({"fit": engine.span(split.weeks[:start]),
                  "judge": engine.span(split.weeks[start:]),
                  "picked": described[picked - 1]["changes"] if picked else None})
    result["split"]["folds"] = folds
    if not described:
        result["reason"] = "keep the defaults: no rule in the grid changes any ticket's replay"
        return clean(result)
    if picked is None:
        result["reason"] = ("keep the defaults: no candidate is on the better side of the "
                            "defaults' frontier (no worse on every figure, better on one, "
                            f"within {budget:g} wake-ups per week) on the selection weeks "
                            f"({result['split']['selection_weeks']})")
        return clean(result)
    chosen = result["candidates"][picked - 1]
    result["selected"] = chosen["changes"]
    name = f"{chosen['name']} = {chosen['value']}"
    worse, better = [], []
    for fig in FIGURES:
        _value, low, high = chosen["difference"][fig.name]
        if low is None or high is None:
            continue
        if (fig.better > 0 and high < 0) or (fig.better < 0 and low > 0):
            worse.append(fig.name)
        if (fig.better > 0 and low > 0) or (fig.better < 0 and high < 0):
            better.append(fig.name)
    within = chosen["wakeups_per_week"][0] is not None and \
        chosen["wakeups_per_week"][0] <= budget
    if worse:
        result["reason"] = (f"keep the defaults: {name}, selected on the selection weeks, is "
                            f"worse on the confirm weeks on {', '.join(worse)}")
    elif not better:
        result["reason"] = (f"keep the defaults: {name}, selected on the selection weeks, is "
                            "indistinguishable from them on the confirm weeks (every "
                            "difference's interval includes 0)")
    elif not within:
        result["reason"] = f"keep the defaults: {name} exceeds {budget:g} wake-ups per week"
    else:
        result["recommended"] = chosen["changes"]
        result["reason"] = (f"set {name}: selected on the selection weeks, on the confirm "
                            f"weeks it is better on {', '.join(better)} beyond the interval "
                            "of the difference and worse on none")
    return clean(result)
