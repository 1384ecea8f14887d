"""Thin Python over the SQL metric views: open read-only, call a view or macro, return a DataFrame.

Metrics are computed in SQL (brainlab/store/models); these functions only pass parameters
(a :class:`~brainlab.spec.thresholds.Thresholds` set) and open the database briefly. The metabolism
functions are imported on first use, so ``brainlab.metrics.usage`` loads without pandas.
"""

from __future__ import annotations

__all__ = ["agent_cost", "claim_status", "cold_start", "ratio", "sessions", "signals",
           "weekly_health", "workspace_violations"]


def __getattr__(name: str):
    """Import brainlab.metrics.metabolism (and pandas) only when one of its functions is used."""
    if name in __all__:
        from brainlab.metrics import metabolism

        return getattr(metabolism, name)
    raise AttributeError(f"module 'brainlab.metrics' has no attribute {name!r}")
