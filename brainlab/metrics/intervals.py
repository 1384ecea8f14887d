"""How sure a figure is: Wilson intervals for shares, bootstrap intervals for means.

Every estimate a person might act on carries one (DESIGN §3 "Every figure says how sure it
is"): a share ``k of n`` its Wilson score interval, a mean (or a median) its percentile
bootstrap interval over the observations, a difference of two shares Newcombe's hybrid
score interval (built from the two Wilson intervals), a difference of two means the
bootstrap interval of the difference (each side resampled on its own). Counts stay counts.

Pure numpy, seeded: the same data give the same interval (a report rendered twice is the
same page). scipy.stats.bootstrap computes the same percentile interval but importing
scipy.stats costs ~0.4 CPU-s in every report kernel, for ~15 lines of numpy.

The resample indices of a fixed seed depend on the sample sizes only: those of small
samples (a week's sessions) are drawn once per process and reused (:func:`_indices`), the
same integers the seeded generator gives, so every interval is unchanged; drawing them was
~40% of a bootstrap's time, and a 52-week trend notebook computes ~1,000 bootstraps.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

LEVEL = 0.95  # every interval brainlab shows is a 95% interval
Z = 1.959963984540054  # the standard normal quantile of 0.975
DRAWS = 2000  # bootstrap resamples
SEED = 43  # bootstrap stream: fixed, so a figure never moves between two renders


@dataclass(frozen=True)
class Estimate:
    """A figure, its n and its 95% interval (``low``/``high`` None: no interval, n < 2)."""

    value: float | None
    n: int
    low: float | None = None
    high: float | None = None
    method: str = ""  # "Wilson", "bootstrap", "Newcombe", "Poisson" or "" (no interval)

    @property
    def excludes_zero(self) -> bool:
        """True when the interval lies wholly above or below 0 (a difference is not noise)."""
        return (self.low is not None and self.high is not None
                and (self.low > 0 or self.high < 0))

    def as_dict(self) -> dict:
        """Plain JSON: value, n, low, high, method."""
        return {"value": _plain(self.value), "n": int(self.n), "low": _plain(self.low),
                "high": _plain(self.high), "method": self.method}


def _plain(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def wilson(k: int, n: int, z: float = Z) -> Estimate:
    """The share ``k / n`` with its Wilson score interval (n = 0: no value)."""
    if n <= 0:
        return Estimate(None, 0, method="Wilson")
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return Estimate(p, n, max(0.0, centre - half), min(1.0, centre + half), "Wilson")


def newcombe(k1: int, n1: int, k2: int, n2: int) -> Estimate:
    """``k1/n1 - k2/n2`` with Newcombe's hybrid score interval (method 10, from Wilson's)."""
    a, b = wilson(k1, n1), wilson(k2, n2)
    if a.value is None or b.value is None:
        return Estimate(None, n1 + n2, method="Newcombe")
    d = a.value - b.value
    low = d - math.sqrt((a.value - a.low) ** 2 + (b.high - b.value) ** 2)
    high = d + math.sqrt((a.high - a.value) ** 2 + (b.value - b.low) ** 2)
    return Estimate(d, n1 + n2, low, high, "Newcombe")


def _clean(values) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    return array[~np.isnan(array)]


KEPT_SIZE = 255  # samples up to this size keep their resample indices (as uint8: 2000 x n bytes)


@functools.lru_cache(maxsize=64)
def _indices(sizes: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """The resample indices of samples of ``sizes``, drawn in turn from one SEED stream."""
    rng = np.random.default_rng(SEED)
    drawn = tuple(rng.integers(0, n, size=(DRAWS, n)).astype(np.uint8) for n in sizes)
    for kept in drawn:
        kept.setflags(write=False)  # shared by every later bootstrap of these sizes
    return drawn


def _resampled(samples: tuple[np.ndarray, ...], stat: str) -> list[np.ndarray]:
    """``stat`` of each sample's DRAWS resamples, the samples drawn in turn from one stream."""
    sizes = tuple(len(x) for x in samples)
    if max(sizes) <= KEPT_SIZE:
        picks = _indices(sizes)
    else:  # large samples: drawn each time (their indices would fill the memory)
        rng = np.random.default_rng(SEED)
        picks = tuple(rng.integers(0, n, size=(DRAWS, n)) for n in sizes)
    out = []
    for x, at in zip(samples, picks, strict=True):
        chosen = x[at]
        out.append(np.median(chosen, axis=1) if stat == "median" else chosen.mean(axis=1))
    return out


def bootstrap(values, stat: str = "mean") -> Estimate:
    """The mean (or ``stat="median"``) of ``values`` with its 95% percentile bootstrap interval."""
    x = _clean(values)
    if len(x) == 0:
        return Estimate(None, 0, method="bootstrap")
    value = float(np.median(x) if stat == "median" else x.mean())
    if len(x) < 2:
        return Estimate(value, 1, method="bootstrap")
    (draws,) = _resampled((x,), stat)
    low, high = np.quantile(draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return Estimate(value, len(x), float(low), float(high), "bootstrap")


def bootstrap_difference(after, before, stat: str = "mean") -> Estimate:
    """``stat(after) - stat(before)`` with its 95% bootstrap interval (each side resampled)."""
    a, b = _clean(after), _clean(before)
    if len(a) == 0 or len(b) == 0:
        return Estimate(None, len(a) + len(b), method="bootstrap")
    f = np.median if stat == "median" else np.mean
    value = float(f(a) - f(b))
    if len(a) < 2 or len(b) < 2:
        return Estimate(value, len(a) + len(b), method="bootstrap")
    draws_a, draws_b = _resampled((a, b), stat)
    draws = draws_a - draws_b
    low, high = np.quantile(draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return Estimate(value, len(a) + len(b), float(low), float(high), "bootstrap")


def poisson_difference(a: int, b: int) -> Estimate:
    """Two counts' difference ``a - b`` with its normal-approximation Poisson interval."""
    half = Z * math.sqrt(a + b)
    return Estimate(float(a - b), a + b, a - b - half, a - b + half, "Poisson")
