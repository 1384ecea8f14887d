"""Per-person usage of a week on a store attached to a lake: the team report's people table.

A store made by ``brainlab attach`` has a view ``lake_files`` (each transcript's user and
machine, from the lake's partitions); a local store's is empty, and :func:`week_people` returns
None. Each API call is counted once (SPEC §7: the line ``cc_requests`` keeps) for the user and
machine of that line, so the rows add up to the week's usage section.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd

from brainlab.metrics.report import DB, Week, has_rows
from brainlab.store import query

_COLUMN = {"user": "user_name", "machine": "machine"}  # usage_by's columns of the dimensions


def _people(db: DB, week: Week, keys: tuple[str, ...]) -> pd.DataFrame:
    """The week's calls, sessions, tokens and cost grouped by ``keys`` (user, machine).

    Sums of ``usage_by`` (the one place usage is summed) over the week's UTC days, the
    transcripts' calls only; ``machines``: how many machines a user's calls came from.
    """
    named = ", ".join(f"coalesce({_COLUMN[k]}, '(unknown)') AS \"{k}\"" for k in keys)
    dims = ", ".join(f"'{k}'" for k in (*keys, "source"))
    machines = "" if "machine" in keys else (
        "(SELECT count(*) FROM usage_by(calls := usage_calls, grain := 'total',"
        " since := $since, until := $until, dims := ['user', 'machine', 'source']) m"
        " WHERE m.source = 'transcript' AND m.user_name IS NOT DISTINCT FROM p.user_name)"
        " AS machines, ")
    order = ", ".join(f'"{k}"' for k in keys)
    return query(db, f"""
        SELECT {named}, {machines}sessions, requests AS calls, total_tokens, cost_usd,
               unpriced_requests AS unpriced_calls
        FROM usage_by(calls := usage_calls, grain := 'total', since := $since, until := $until,
                      dims := [{dims}]) p
        WHERE source = 'transcript'
        ORDER BY cost_usd DESC NULLS LAST, {order}""",
                 {"since": week.start, "until": week.end - dt.timedelta(days=1)})


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
