"""Change points in a weekly or daily series, with ruptures (issue 43 item 2).

A series is its observations (one value per session: a health score, a ratio, a 0/1 coach
trigger, tokens...) grouped by period; a point is the period's mean (a share, for 0/1
series). The scan, for one series:

1. **Standardise** the points: a mean's observations become normal scores (ranks, so a
   few large values are not a step), a share's points their arcsine square roots; each
   point is divided by its noise, the larger of the series' own period-to-period noise
   (robust: :func:`noise_scale`) and its sampling error (:func:`standardised`). A point
   one noise unit off is then 1.
2. **Segment** with ruptures' PELT (exact optimal partition under a linear penalty), cost
   ``l2`` (a change in mean), segments of one period or more, penalty
   :func:`penalty_for` per change point.
3. **Confirm** each boundary on the sessions themselves: the observations of the segment
   after against those of the segment before; the difference of their means (shares) must
   have a 95% interval that excludes 0 (bootstrap; Newcombe for shares).

**The penalty** of one change point is ``BETA x ln(points)`` (BIC's form: a longer
series offers more places to cut), BETA = 8, in squared noise units. Calibrated on null
histories (``brainlab synth --plants none``: no planted effect), 12 weeks, 45 seeds of
100-159, every series scanned weekly and daily: BETA 6 and 7 flagged a change in 6 and 3
of 45 histories (the rolling ratio, agents), 8 and 9 in none; on the demo brain (every
plant) 8
still finds the build-brain week (the share of build-brain sessions rises in 2026-W43 and
falls back in W44) and the audit plant's under-reported logs (W41 to W43). The false-alarm
rate on seeds the calibration did not see is measured by
``benchmarks/bench_trend_false_alarms.py`` (docs/trends.md has the figure).
A pulse (one planted week) is two change points, its start and its end.

An agent's series is scanned only between its first and its last load: an agent that
appears or disappears is *new* or *gone* (:func:`brainlab.metrics.trends.agent_classes`),
never a change point.
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np

from brainlab.metrics.intervals import Estimate, bootstrap_difference, newcombe

BETA = 8.0  # penalty per change point = BETA x ln(points), in squared noise units (docstring)
MIN_POINTS = 6  # periods with data a series needs before it is scanned
MAD_TO_SD = 1.4826  # a normal distribution's standard deviation per median absolute deviation


@dataclass(frozen=True)
class Change:
    """One confirmed change point: the period it starts, the means around it, the difference."""

    series: str
    period: str  # label of the first period after the change (week or day)
    index: int  # its position among the series' periods with data
    before: float
    after: float
    difference: Estimate  # after - before, with its 95% interval

    @property
    def direction(self) -> str:
        """"up" or "down"."""
        return "up" if self.after > self.before else "down"


def noise_scale(points: np.ndarray, memory: bool = False) -> float:
    """The series' period-to-period noise as a standard deviation (robust; 0 when constant).

    From the first differences (MAD / sqrt(2): one planted week moves two differences of
    eleven, not the scale). ``memory``: a series whose adjacent points share observations
    (the 7-day rolling ratio, the coach trigger it drives) differs less from one week to
    the next than two independent weeks would, so the differences understate its noise:
    the larger of that and the points' own spread about their median (MAD) is taken.
    """
    diffs = np.diff(points)
    if len(diffs) == 0:
        return 0.0
    scale = MAD_TO_SD * float(np.median(np.abs(diffs - np.median(diffs)))) / np.sqrt(2)
    if memory:
        scale = max(scale, MAD_TO_SD * float(np.median(np.abs(points - np.median(points)))))
    if scale == 0:  # more than half the differences equal: fall back on the spread
        scale = float(np.std(points))
    return scale


def within_scale(groups: list[np.ndarray]) -> float:
    """The pooled standard deviation of the observations inside their periods."""
    dof = sum(len(g) - 1 for g in groups)
    if dof <= 0:
        return 0.0
    return float(np.sqrt(sum(((g - g.mean()) ** 2).sum() for g in groups) / dof))


def normal_scores(groups: list[np.ndarray]) -> list[np.ndarray]:
    """Every observation replaced by its normal score, kept in its period.

    Van der Waerden's: the normal quantile of its rank over the whole series, ties averaged.

    A health score of 15 among scores of 1-3, or a ratio of 4.5 in a week of few
    build-brain sessions, is then one high rank, not a step: the scan reads order, not
    tails. A change of level still moves a period's scores together.
    """
    import pandas as pd

    flat = np.concatenate(groups)
    ranks = pd.Series(flat).rank(method="average").to_numpy()  # ties: their mean rank
    # the normal quantile of each distinct rank (AS241, as scipy's ndtri: importing
    # scipy.special costs ~0.12 CPU-s a process, more than the scans of a 52-week history)
    distinct, at = np.unique(ranks, return_inverse=True)
    quantile = NormalDist().inv_cdf
    scores = np.array([quantile(p) for p in (distinct - 0.5) / len(flat)])[at]
    return np.split(scores, np.cumsum([len(g) for g in groups])[:-1])


def standardised(groups: list[np.ndarray], share: bool = False,
                 memory: bool = False) -> np.ndarray | None:
    """Each period's mean in noise units, or None when the series does not vary.

    A point's noise is the larger of the series' week-to-week noise (:func:`noise_scale`,
    which holds what moves whole weeks: the rolling ratio's memory) and its own sampling
    error (the pooled within-period deviation over sqrt(n): a week of 2 sessions is
    noisier than a week of 20, and a series of rare large values is not read as steps).
    ``share``: 0/1 observations; the points are then the shares' arcsine square roots,
    whose sampling error is 1 / (2 sqrt(n)) whatever the share (a rare event's share is
    skewed: 3 of 15 in a week where 1 of 30 is usual is not 5 noise units).
    """
    sizes = np.array([len(g) for g in groups], dtype=float)
    if share:
        points = np.arcsin(np.sqrt(np.array([g.mean() for g in groups])))
        sampling = 1 / (2 * np.sqrt(sizes))
    else:
        groups = normal_scores(groups)
        points = np.array([g.mean() for g in groups])
        sampling = within_scale(groups) / np.sqrt(sizes)
    scale = np.maximum(noise_scale(points, memory), sampling)
    if not np.all(scale > 0):
        return None
    return (points - np.median(points)) / scale


def penalty_for(points: int, beta: float = BETA) -> float:
    """The penalty of one change point in a series of ``points`` periods: beta x ln(points)."""
    return beta * float(np.log(points))


def breakpoints(groups: list[np.ndarray], beta: float = BETA,
                share: bool = False, memory: bool = False) -> list[int]:
    """Indices where a new segment starts (0 < i < len), by PELT on the standardised points."""
    if len(groups) < MIN_POINTS:
        return []
    z = standardised(groups, share, memory)
    if z is None:
        return []
    ends = pelt_l2(z, penalty_for(len(z), beta))
    return [int(e) for e in ends if 0 < e < len(groups)]


PELT_MODULE = "ruptures.detection._detection.ekcpd"  # ruptures' compiled kernel routines


@functools.cache
def _pelt_routine():
    """Ruptures' C routine of PELT under the l2 cost, loaded from its compiled module alone.

    ``import ruptures`` imports every cost it offers, and with them scipy.stats and
    scipy.spatial: ~0.8 CPU-s in each report kernel and notebook, where the scans of a
    52-week history take 0.03 (docs/trends.md §6). The routine is the one
    ``KernelCPD(kernel="linear").predict(pen=...)`` calls; None when ruptures' layout is
    not the one expected (the package is then imported: the same routine).
    """
    import sys

    if PELT_MODULE in sys.modules:
        return sys.modules[PELT_MODULE].ekcpd_pelt_L2
    spec = importlib.util.find_spec("ruptures")  # finds the package without importing it
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "detection" / "_detection"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"ekcpd{suffix}"
        if path.exists():
            try:
                found = importlib.util.spec_from_file_location(PELT_MODULE, path)
                module = importlib.util.module_from_spec(found)
                found.loader.exec_module(module)
                return module.ekcpd_pelt_L2
            except (ImportError, AttributeError, OSError):
                return None
    return None


def pelt_l2(z: np.ndarray, penalty: float) -> list[int]:
    """The ends of PELT's optimal segments of ``z`` (l2 cost, segments of 1 point or more).

    ruptures' ``KernelCPD(kernel="linear", min_size=1).fit(z).predict(pen=penalty)``: its C
    routine (:func:`_pelt_routine`) returns each end's previous end; the last end is len(z).
    """
    routine = _pelt_routine()
    if routine is None:
        import ruptures

        return [int(e) for e in ruptures.KernelCPD(kernel="linear", min_size=1).fit(z).predict(
            pen=penalty)]
    previous = routine(np.ascontiguousarray(z, dtype=np.double).reshape(-1, 1),
                       float(penalty), 1)
    ends, end = [], len(z)
    while end > 0:
        ends.append(end)
        end = int(previous[end])
    return ends[::-1]


def scan(series: str, labels: list[str], groups: list[np.ndarray], kind: str = "mean",
         beta: float = BETA, memory: bool = False) -> list[Change]:
    """The confirmed change points of one series.

    ``labels``/``groups``: the periods with data, in order, and each one's observations.
    ``kind``: "mean" (any values), "share" (0/1 values: Newcombe's interval) or "loads"
    (an agent's tokens per session, 0 where not loaded: scanned and confirmed as the share
    of sessions loading it, its before and after in tokens). ``memory``: adjacent periods
    share observations (:func:`noise_scale`).
    """
    if len(groups) < MIN_POINTS:
        return []
    share = kind in ("share", "loads")
    flags = [(g > 0).astype(float) for g in groups] if kind == "loads" else groups
    cuts = breakpoints(flags, beta, share, memory)
    bounds = [0, *cuts, len(groups)]
    found = []
    for i, cut in enumerate(cuts):
        before = np.concatenate(groups[bounds[i]:cut])
        after = np.concatenate(groups[cut:bounds[i + 2]])
        if share:
            hit_b = np.concatenate(flags[bounds[i]:cut])
            hit_a = np.concatenate(flags[cut:bounds[i + 2]])
            diff = newcombe(int(hit_a.sum()), len(hit_a), int(hit_b.sum()), len(hit_b))
            if kind == "loads" and diff.value is not None:  # back to tokens: one size a load
                size = float(np.concatenate([before, after])[
                    np.concatenate([hit_b, hit_a]) > 0].mean())
                diff = Estimate(float(after.mean() - before.mean()), diff.n, diff.low * size,
                                diff.high * size, diff.method)
        else:
            diff = bootstrap_difference(after, before)
        if diff.excludes_zero:
            found.append(Change(series, labels[cut], cut, float(before.mean()),
                                float(after.mean()), diff))
    return found
