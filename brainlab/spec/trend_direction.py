"""Which way is better, per metric (issue 43): the one place a trend's colour comes from.

A change of a metric is *better* or *worse* only by this table; a metric whose
``higher_is_better`` is None (session counts, the measured-vs-logged gap, an agent's load
cost taken alone) rises or falls without a judgement. ``kind`` says how its uncertainty is
shown: ``mean`` (a bootstrap interval), ``share`` (k of n, a Wilson interval), ``count``
(a count: shown as it is). Each row cites the SPEC address that makes the direction so.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Direction:
    """One metric: its label, which way is better (None: neither), its kind, its SPEC address."""

    metric: str
    label: str
    higher_is_better: bool | None
    kind: str  # "mean", "share" or "count"
    spec: str


DIRECTIONS: dict[str, Direction] = {d.metric: d for d in (
    # the change-point and comparison series (store/models/marts/trend_observations_for.sql)
    Direction("health", "mean health score", True, "mean", "§3.2"),
    Direction("ratio", "rolling ratio at the session", True, "mean", "§3.3"),
    Direction("category_share", "share of the sessions in the category", None, "share",
              "§2.2, §3.3"),
    Direction("coach_triggers", "sessions firing the coach", False, "share", "§3.3"),
    Direction("tokens_per_session", "tokens per session", False, "mean", "§3.1"),
    Direction("cost_per_session", "cost per Claude Code session (USD)", False, "mean", "§7"),
    Direction("agent_load_cost", "agent load cost per session (tokens)", False, "mean", "§2.5"),
    Direction("logged_gap", "tokens measured - logged", None, "mean", "§3.1, §7"),
    # the weekly report's headline (store/models/marts/weekly_health_for.sql)
    Direction("sessions", "sessions", None, "count", "§2.2"),
    Direction("mean_health", "mean health score", True, "mean", "§3.2"),
    Direction("median_health", "median health score", True, "mean", "§3.2"),
    Direction("last_ratio", "ratio at the last session", True, "mean", "§3.3"),
    Direction("min_ratio", "lowest ratio", True, "mean", "§3.3"),
    Direction("inefficient", "inefficient sessions", False, "share", "§3.3"),
    Direction("conserve_next", "sessions recommending conserve next", False, "share", "§3.3"),
    Direction("narcissistic", "sessions in a narcissistic loop", False, "share", "§3.3"),
    Direction("saturated", "saturated sessions", False, "share", "§3.3"),
)}


def direction_of(series: str) -> Direction:
    """The direction of a series name (``health:use-brain`` -> health, ``agent:x`` -> agent cost)."""
    metric = series.split(":", 1)[0]
    metric = {"agent": "agent_load_cost", "share": "category_share"}.get(metric, metric)
    return DIRECTIONS[metric]
