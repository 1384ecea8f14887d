"""The local day of every session, without pandas: the weeks ``report weekly`` plans.

A metabolism log's own date (its dates are the user's, SPEC §3.1) and a transcript session's
first request, turned from UTC into the zone given (issue 24). The report command plans its
weeks from these days before anything needs a DataFrame, so its process never imports pandas
(the kernel does the DataFrame work; issue 28 item 8, docs/report.md §4).
"""

from __future__ import annotations

import os
from datetime import date

from brainlab.store import rows

SESSION_DAYS = ("SELECT CAST(started_at AS DATE) AS day FROM metabolism_sessions"
                " UNION ALL SELECT CAST(timezone(?, first_ts AT TIME ZONE 'UTC') AS DATE)"
                " FROM usage_sessions")


def held_days(db: str | os.PathLike, tz: str = "UTC") -> list[date]:
    """Every distinct day holding a session, in the zone ``tz``, in order."""
    _columns, found = rows(db, f"SELECT DISTINCT day FROM ({SESSION_DAYS}) WHERE day IS NOT NULL"
                               " ORDER BY day", [tz])
    return [day for (day,) in found]
