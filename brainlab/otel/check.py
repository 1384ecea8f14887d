"""``brainlab usage check``: where Claude Code's metric totals and the call totals disagree.

Metrics (``claude_code.token.usage``, ``claude_code.cost.usage``) are a second count of the
same calls. Per session and model (``otel_usage_check``), a row is reported when a token
total differs by more than the tolerance, or when only one side has the session.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from brainlab.store import reader

COLUMNS = ("session_id", "model", "calls", "metric_tokens", "call_tokens", "metric_cost_usd",
           "event_cost_usd", "only_in")
_SQL = """
    SELECT session_id, model, calls,
           coalesce(metric_input_tokens, 0) + coalesce(metric_output_tokens, 0)
             + coalesce(metric_cache_creation_tokens, 0) + coalesce(metric_cache_read_tokens, 0)
             AS metric_tokens,
           coalesce(call_input_tokens, 0) + coalesce(call_output_tokens, 0)
             + coalesce(call_cache_creation_tokens, 0) + coalesce(call_cache_read_tokens, 0)
             AS call_tokens,
           metric_cost_usd, event_cost_usd, only_in
    FROM otel_usage_check"""


@dataclass
class CheckResult:
    """The disagreeing (session, model) rows and a one-line verdict."""

    columns: tuple[str, ...]
    rows: list[tuple]
    message: str


def usage_check(db: str | os.PathLike, tolerance: float = 0.01) -> CheckResult:
    """Compare metric totals with call totals per session and model; list what disagrees."""
    with reader(db) as con:
        found = con.execute(_SQL + " ORDER BY session_id, model").fetchall()
    bad = [r for r in found if r[7] is not None
           or abs(r[3] - r[4]) > tolerance * max(r[3], r[4], 1)]
    if not found:
        return CheckResult(COLUMNS, [], f"No Claude Code metrics in {db}: nothing to check"
                           " (ingest the metrics file with: brainlab ingest otel PATH)")
    if not bad:
        return CheckResult(COLUMNS, [], f"metrics and calls agree: {len(found)} session/model"
                           f" pairs within {tolerance:.0%}")
    return CheckResult(COLUMNS, [(r[0][:8],) + tuple(r[1:]) for r in bad],
                       f"{len(bad)} of {len(found)} session/model pairs disagree beyond"
                       f" {tolerance:.0%} (only_in: the side that has the session)")
