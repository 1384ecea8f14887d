"""The replays' percentile-bootstrap intervals, written once (issue 41 item 4).

The broker replay resamples sprints and the regulator replay tickets, each with weights or
picks of its own (:mod:`brainlab.sim.broker_checks`, :mod:`brainlab.sim.regulator`); what
they share is here: the interval of a set of bootstrap draws, a figure as the JSON triple
``[value, low, high]``, and whether an interval excludes 0. The trend intervals of single
estimates (Wilson, Newcombe, a bootstrap of one sample) are :mod:`brainlab.metrics.intervals`.
"""

from __future__ import annotations

import warnings

import numpy as np


def percentile_interval(draws: np.ndarray, level: float, axis: int = 0
                        ) -> tuple[np.ndarray, np.ndarray]:
    """The ``level`` percentile interval of ``draws`` along ``axis`` (NaN draws left out).

    A figure undefined in every draw (a policy that never loads, a share of nothing) gets
    NaN bounds, silently: the caller shows it as undefined.
    """
    lo, hi = (1 - level) / 2 * 100, (1 + level) / 2 * 100
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return (np.nanpercentile(draws, lo, axis=axis), np.nanpercentile(draws, hi, axis=axis))


def triple(value, low, high) -> list:
    """``[value, low, high]`` as plain floats, None where undefined (the JSON objects' form)."""
    return [None if v is None or v != v else float(v) for v in (value, low, high)]


def excludes_zero(low, high) -> bool:
    """True when the interval ``[low, high]`` is defined and lies wholly above or below 0."""
    return bool(low == low and high == high and (low > 0 or high < 0))
