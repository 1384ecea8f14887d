"""The tuning engine: candidates judged on weeks they were not selected on, with intervals.

Every target (session thresholds, breath thresholds, regulator limits) reduces to the same
shape: for each candidate (index 0 is the current values, "the defaults") and each ISO week,
a few additive counts (sessions, alerts, bad sessions alerted, ...). Everything below works
on that array (candidates x weeks x quantities), so the three targets share one splitter, one
set of intervals and one decision.

How a recommendation is made (the issue 42 contract, stated in every result's ``split``):

- **Forward chaining by week.** The weeks spanned are split into a selection block (the
  earlier weeks) and a confirm block (the last ``confirm_share`` of them, at least 2 weeks).
  Within the selection block each fold k picks the best candidate on weeks 1..k and judges
  it on week k+1 (the folds show how stable the choice is); the last fold picks on the whole
  selection block and is judged on the confirm block.
- **Many candidates.** The confirm block is never used for selection, so the one candidate
  picked there is tested once: select on earlier held-out weeks, confirm on a final block.
- **Every figure shown is held out**: measured on the confirm block.
- **Intervals** (95%): Wilson for proportions (base rate, precision, recall, shares), a
  percentile bootstrap over weeks otherwise (lift, alerts per week, per-ticket costs) and for
  every paired difference from the defaults (the same resampled weeks for both sides).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

LEVEL = 0.95
RESAMPLES = 2000
MIN_FIT_WEEKS = 2  # the first fold picks on at least this many weeks
MIN_CONFIRM_WEEKS = 2
CONFIRM_SHARE = 0.5
Z = 1.959963984540054  # the normal quantile of a two-sided 95% interval


# Student's t 97.5% quantiles by degrees of freedom (1..30); above 30 the normal's is used.
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def widening(weeks: int) -> float:
    """How much a percentile bootstrap over ``weeks`` weeks is widened around its estimate.

    Resampling n weeks underestimates the spread of a mean over them by sqrt((n-1)/n), and
    with few weeks the normal quantile is too small: the interval's half-widths are scaled by
    sqrt(n/(n-1)) * t(n-1) / z, so its coverage holds with 6 or 8 confirm weeks (measured:
    tests/test_tune_engine.py's random labels, benchmarks/bench_tuning_null.py).
    """
    if weeks < 2:
        return math.inf
    t = T975[weeks - 2] if weeks - 1 <= len(T975) else Z
    return math.sqrt(weeks / (weeks - 1)) * t / Z


def wilson(k: float, n: float, z: float = Z) -> tuple[float, float]:
    """Wilson score interval of the proportion k/n (NaN bounds when n = 0)."""
    if n <= 0:
        return math.nan, math.nan
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def ratio(num, den):
    """Return num / den elementwise, NaN where den is 0 (arrays or floats)."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


@dataclass(frozen=True)
class Figure:
    """One figure computed from summed quantities.

    ``value(sums, weeks)``: sums is (..., quantities), weeks the number of weeks summed.
    ``proportion``: (numerator, denominator) quantity names for a Wilson interval, else the
    interval is a bootstrap over weeks. ``better``: +1 when higher is better, -1 when lower
    is, 0 when neither (alert volume).
    """

    name: str
    value: Callable
    proportion: tuple[str, str] | None = None
    better: int = 0


@dataclass(frozen=True)
class Split:
    """Weeks (labels) cut into a selection block and a confirm block, and the folds."""

    weeks: list[str]
    selection: int  # the first ``selection`` weeks select; the rest confirm

    @property
    def confirm(self) -> int:
        """Number of confirm weeks."""
        return len(self.weeks) - self.selection

    def folds(self) -> list[int]:
        """Fold k picks on weeks [0, k) and is judged on week k (selection block only)."""
        return list(range(MIN_FIT_WEEKS, self.selection))

    def describe(self) -> dict:
        """The split as plain data (the ``split`` key of a result)."""
        sel, conf = self.weeks[:self.selection], self.weeks[self.selection:]
        return {
            "method": "forward chaining by ISO week: each fold picks on weeks 1..k and is "
                      "judged on week k+1; the last pick (on every selection week) is judged "
                      "on the confirm weeks, never used for selection",
            "multiple_candidates": "select on earlier held-out weeks, confirm the one "
                                   "selected on a final block of weeks never used for "
                                   "selection",
            "weeks": len(self.weeks),
            "selection_weeks": span(sel),
            "confirm_weeks": span(conf),
            "figures_from": "the confirm weeks (held out)",
            "intervals": f"{LEVEL:.0%}: Wilson for proportions; percentile bootstrap over "
                         f"weeks ({RESAMPLES} resamples, widened for few weeks by "
                         "sqrt(n/(n-1)) t(n-1)/z) for the other figures and for every "
                         "difference from the defaults (paired: the same weeks)",
        }


def span(weeks: Sequence[str]) -> str:
    """Weeks as 'first .. last (n)' (one week: its label)."""
    if not weeks:
        return ""
    return weeks[0] if len(weeks) == 1 else f"{weeks[0]} .. {weeks[-1]} ({len(weeks)})"


def split_weeks(weeks: Sequence[str], confirm_share: float = CONFIRM_SHARE) -> Split | None:
    """The split of ``weeks`` (in order), or None when there are too few to select and confirm."""
    n = len(weeks)
    if n < MIN_FIT_WEEKS + MIN_CONFIRM_WEEKS:
        return None
    confirm = max(MIN_CONFIRM_WEEKS, int(round(n * confirm_share)))
    confirm = min(confirm, n - MIN_FIT_WEEKS)
    return Split(list(weeks), n - confirm)


def resample_weights(n_weeks: int, seed: int, resamples: int = RESAMPLES) -> np.ndarray:
    """(resamples, n_weeks) counts of each week in a bootstrap resample of the weeks."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n_weeks, size=(resamples, n_weeks))
    flat = picks + (np.arange(resamples) * n_weeks)[:, None]
    return np.bincount(flat.ravel(), minlength=resamples * n_weeks).reshape(
        resamples, n_weeks).astype(float)


@dataclass
class Board:
    """Per candidate and week, additive quantities; and the figures read from them."""

    quantities: tuple[str, ...]
    sums: np.ndarray  # (candidates, weeks, quantities)
    figures: tuple[Figure, ...]
    seed: int = 0
    _q: dict = field(init=False, repr=False)

    def __post_init__(self) -> None:
        """Index the quantities by name."""
        self._q = {name: i for i, name in enumerate(self.quantities)}

    def q(self, sums: np.ndarray, name: str) -> np.ndarray:
        """One quantity of a (..., quantities) array."""
        return sums[..., self._q[name]]

    def figure(self, name: str) -> Figure:
        """The figure called ``name``."""
        return next(f for f in self.figures if f.name == name)

    def values(self, sums: np.ndarray, weeks: float) -> dict[str, np.ndarray]:
        """Every figure of (..., quantities) sums."""
        return {f.name: np.asarray(f.value(self, sums, weeks), dtype=float)
                for f in self.figures}

    def block(self, start: int, stop: int) -> np.ndarray:
        """(candidates, quantities) sums over weeks [start, stop)."""
        return self.sums[:, start:stop].sum(axis=1)

    def held_out(self, start: int, stop: int, candidates: Sequence[int]) -> list[dict]:
        """Each candidate's figures on weeks [start, stop), and its difference from the defaults.

        Both as [value, low, high]; candidate 0 is the defaults.
        """
        weeks = stop - start
        data = self.sums[:, start:stop]  # (C, W, Q)
        weights = resample_weights(weeks, self.seed)  # (B, W)
        idx = [0, *[c for c in candidates if c != 0]]
        boot = np.einsum("bw,cwq->cbq", weights, data[idx])  # (C', B, Q)
        point = self.values(data[idx].sum(axis=1), weeks)  # name -> (C',)
        boot_values = self.values(boot, weeks)  # name -> (C', B)
        lo_q, hi_q = (1 - LEVEL) / 2 * 100, (1 + LEVEL) / 2 * 100
        out = {}
        for pos, cand in enumerate(idx):
            row, diff = {}, {}
            for fig in self.figures:
                value = float(point[fig.name][pos])
                if fig.proportion:
                    num, den = fig.proportion
                    totals = data[cand].sum(axis=0)
                    lo, hi = wilson(float(self.q(totals, num)), float(self.q(totals, den)))
                else:
                    draws = boot_values[fig.name][pos]
                    lo, hi = _widened(value, draws, lo_q, hi_q, weeks)
                    if math.isfinite(lo) and np.nanmin(draws) >= 0:
                        lo = max(lo, 0.0)  # a count or a ratio of counts: never below 0
                row[fig.name] = [value, lo, hi]
                d = boot_values[fig.name][pos] - boot_values[fig.name][0]
                change = value - float(point[fig.name][0])
                diff[fig.name] = [change, *_widened(change, d, lo_q, hi_q, weeks)]
            row["difference"] = diff
            row["counts"] = {name: float(self.q(data[cand].sum(axis=0), name))
                             for name in self.quantities}
            out[cand] = row
        return [out[c] for c in idx]


def _widened(value: float, draws: np.ndarray, lo_q: float, hi_q: float,
             weeks: int) -> tuple[float, float]:
    """The percentile interval of ``draws`` widened around ``value`` (:func:`widening`)."""
    lo, hi = _percentiles(draws, lo_q, hi_q)
    if not (math.isfinite(value) and math.isfinite(lo) and math.isfinite(hi)):
        return lo, hi
    factor = widening(weeks)
    return value - max(0.0, value - lo) * factor, value + max(0.0, hi - value) * factor


def _percentiles(values: np.ndarray, lo_q: float, hi_q: float) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if len(finite) < len(values) * 0.5 or not len(finite):
        return math.nan, math.nan
    lo, hi = np.percentile(finite, [lo_q, hi_q])
    return float(lo), float(hi)


def clean(value):
    """Plain Python numbers (no numpy reprs), NaN as None, rounded for reading."""
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        value = float(value)
        if math.isnan(value) or math.isinf(value):
            return None
        return round(value, 4)
    return value
