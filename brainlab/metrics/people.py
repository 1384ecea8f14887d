"""Per-person usage of a week on a store attached to a lake: the team report's people table.

A store made by ``brainlab attach`` has a view ``lake_files`` (each transcript's user and
machine, from the lake's partitions); a local store has none, and :func:`week_people` returns
None. Each API call is counted once (SPEC §7: the line ``cc_requests`` keeps) for the user and
machine of that line, so the rows add up to the week's usage section.
"""

from __future__ import annotations

import pandas as pd

from brainlab.metrics.report import DB, Week, has_rows
from brainlab.store import query

_OWNER = {"user": "coalesce(f.\"user\", '(unknown)')",
          "machine": "coalesce(f.machine, '(unknown)')"}


def _people(db: DB, week: Week, keys: tuple[str, ...]) -> pd.DataFrame:
    """The week's calls, sessions, tokens and cost grouped by ``keys`` (user, machine)."""
    named = ", ".join(f'{_OWNER[k]} AS "{k}"' for k in keys)
    machines = "" if "machine" in keys else \
        f"count(DISTINCT {_OWNER['machine']}) AS machines, "
    order = ", ".join(f'"{k}"' for k in keys)
    return query(db, f"""
        SELECT {named}, {machines}count(DISTINCT r.session_id) AS sessions,
               count(*) AS calls,
               sum(r.input_tokens + r.output_tokens + r.cache_creation_tokens
                   + r.cache_read_tokens) AS total_tokens,
               sum(r.cost_usd) AS cost_usd,
               count(*) FILTER (WHERE r.cost_usd IS NULL) AS unpriced_calls
        FROM cc_requests r LEFT JOIN lake_files f USING (source_file)
        WHERE r.source = 'transcript' AND r.ts >= ? AND r.ts < ?
        GROUP BY ALL ORDER BY cost_usd DESC NULLS LAST, {order}""",
                 [week.start_at, week.end_at])


def week_people(db: DB, week: Week) -> dict[str, pd.DataFrame] | None:
    """The week's calls per user (``by_user``) and per user and machine (``by_machine``).

    None when ``db`` is not attached to a lake (no ``lake_files`` view) or holds no call.
    ``by_user`` counts a session used on two machines once; ``machines`` is how many machines
    the user's calls came from.
    """
    if not has_rows(db, "lake_files") or not has_rows(db, "cc_requests"):
        return None
    return {"by_user": _people(db, week, ("user",)),
            "by_machine": _people(db, week, ("user", "machine"))}
