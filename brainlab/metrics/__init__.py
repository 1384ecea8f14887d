"""Thin Python over the SQL metric views: open read-only, call a view or macro, return a DataFrame.

Metrics are computed in SQL (brainlab/store/views); these functions only pass parameters
(a :class:`~brainlab.config.Thresholds` set) and open the database briefly.
"""

from brainlab.metrics.metabolism import (
    agent_cost,
    claim_status,
    cold_start,
    ratio,
    sessions,
    signals,
    weekly_health,
    workspace_violations,
)

__all__ = ["agent_cost", "claim_status", "cold_start", "ratio", "sessions", "signals",
           "weekly_health", "workspace_violations"]
