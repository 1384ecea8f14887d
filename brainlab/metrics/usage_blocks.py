"""Claude's 5-hour usage windows (issue 24): ``brainlab usage blocks``.

The rule is ccusage's (20.0.24, ``identify_session_blocks``), stated in docs/transcripts.md
"5-hour blocks": calls are taken in time order; a block starts at the UTC hour (floored) of
its first call and ends 5 hours later; a call more than 5 hours after the block's start, or
more than 5 hours after the previous call, starts a new block, and in the second case a gap
block runs from 5 hours after the previous call to that call. A block is active while the
last call is less than 5 hours old and its end is still ahead; for it the time left and the
projected total (tokens and cost at the block's burn rate until its end) are given.
Burn rate = tokens (all four kinds) per minute and dollars per hour between the block's
first and last call (none when they coincide); ccusage shows it for the active block only,
brainlab for every block.

Messages Claude Code makes itself (model ``<synthetic>``: no API call, no tokens) are not
calls here, as in ccusage's blocks. The calls are read from the usage roll-up's UTC
15-minute buckets (a few thousand rows, the same source as ``usage daily``), never from the
call rows: a block's start and end are whole
hours, so they fall on bucket edges, and a gap longer than 5 hours can only lie between two
buckets (the first and last call of each bucket are kept). The one case a bucket cannot
decide, a call at exactly hh:00:00.000 five hours after a block's start followed by others in
the same 15 minutes, counts that bucket in the earlier block.
"""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from brainlab.common.tables import Column
from brainlab.metrics.usage_time import resolve_timezone, settings_defaults
from brainlab.store import reader, usage_rollup

BLOCK = timedelta(hours=5)
TOKENS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")
COLUMNS = ["block_start", "block_end", "last_call", "is_active", "is_gap", "requests",
           *TOKENS, "total_tokens", "cost_usd", "models", "tokens_per_min", "usd_per_hour",
           "minutes_left", "projected_tokens", "projected_cost_usd"]
# terminal columns (brainlab.common.tables): on a narrow terminal the token kinds go first
TABLE_COLUMNS = [
    Column("block_start", "block start"), Column("status", "status"),
    Column("requests", "calls", drop_rank=2),
    Column("input_tokens", "input", drop_rank=3), Column("output_tokens", "output", drop_rank=3),
    Column("total_tokens", "total tokens"), Column("cost_usd", "cost"),
    Column("tokens_per_min", "tokens/min", kind="int", drop_rank=1, total=False),
    Column("usd_per_hour", "$/h", kind="money", drop_rank=1, total=False),
]

# the calls per UTC 15-minute bucket and model (usage_by, the one place usage is summed),
# the buckets in time order and, within one, the models in the order of their first call
_BUCKETS = """
    SELECT bucket, first_ts, last_ts, {tokens}, requests, cost_usd, model
    FROM {macro}
    WHERE bucket IS NOT NULL AND model IS DISTINCT FROM '<synthetic>'{where}
    ORDER BY bucket, first_ts, model"""


def per_bucket(rows: list[tuple]) -> list[tuple]:
    """(bucket, first, last, 4 token sums, calls, cost, models) of each bucket's model rows.

    Adds the rows of one bucket as the blocks add buckets (:func:`blocks_from_buckets`).
    """
    out: list[list] = []
    for bucket, first, last, *tokens, requests, cost, model in rows:
        if out and out[-1][0] == bucket:
            row = out[-1]
            row[1], row[2] = min(row[1], first), max(row[2], last)
            row[3:7] = [a + int(b or 0) for a, b in zip(row[3:7], tokens, strict=True)]
            row[7] += int(requests or 0)
            row[8] = None if row[8] is None and cost is None else (row[8] or 0.0) + (cost or 0.0)
            row[9] += [model] if model is not None else []
        else:
            out.append([bucket, first, last, *(int(t or 0) for t in tokens), int(requests or 0),
                        cost, [model] if model is not None else []])
    return [tuple(r) for r in out]


class Block:
    """One 5-hour window (or the gap between two), as ccusage reports it.

    A plain class: a dataclass would compile its methods at import (tens of ms at start-up).
    """

    __slots__ = ("start", "end", "last_call", "first_call", "is_gap", "requests", "tokens",
                 "cost_usd", "models", "is_active")

    def __init__(self, start: datetime, end: datetime, last_call: datetime | None = None,
                 first_call: datetime | None = None, is_gap: bool = False) -> None:
        self.start, self.end = start, end  # UTC, aware
        self.last_call, self.first_call, self.is_gap = last_call, first_call, is_gap
        self.requests = 0
        self.tokens: tuple[int, ...] = (0, 0, 0, 0)
        self.cost_usd = 0.0
        self.models: tuple[str, ...] = ()
        self.is_active = False

    def burn(self) -> tuple[float, float] | None:
        """(tokens per minute, dollars per hour) between the first and last call, if apart."""
        if self.is_gap or self.first_call is None or self.last_call is None:
            return None
        minutes = (self.last_call - self.first_call).total_seconds() / 60
        if minutes <= 0:
            return None
        return sum(self.tokens) / minutes, self.cost_usd / minutes * 60

    def projection(self, now: datetime) -> tuple[int | None, int | None, float | None]:
        """(minutes left, projected tokens, projected cost) of the active block, else Nones.

        The projection needs a burn rate (two calls apart in time), as ccusage's.
        """
        if not self.is_active:
            return None, None, None
        left = round((self.end - now).total_seconds() / 60)
        burn = self.burn()
        if burn is None:
            return left, None, None
        return (left, round(sum(self.tokens) + burn[0] * left),
                round(self.cost_usd + burn[1] / 60 * left, 2))


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def blocks_from_buckets(buckets: list[tuple], now: datetime) -> list[Block]:
    """The blocks of per-bucket sums (bucket, first, last, 4 token sums, calls, cost, models)."""
    out: list[Block] = []
    current: Block | None = None

    def close(block: Block) -> None:
        block.is_active = (now - block.last_call < BLOCK) and now < block.end
        out.append(block)

    for _bucket, first, last, *rest in buckets:
        first, last = _utc(first), _utc(last)
        tokens, (requests, cost, models) = tuple(int(t or 0) for t in rest[:4]), rest[4:]
        if current is not None:
            since_last = first - current.last_call
            if first - current.start > BLOCK or since_last > BLOCK:
                close(current)
                if since_last > BLOCK:
                    out.append(Block(current.last_call + BLOCK, first, is_gap=True))
                current = None
        if current is None:
            start = first.replace(minute=0, second=0, microsecond=0)
            current = Block(start, start + BLOCK, first_call=first, last_call=first)
        current.last_call = max(current.last_call, last)
        current.requests += int(requests or 0)
        current.tokens = tuple(a + b for a, b in zip(current.tokens, tokens, strict=True))
        current.cost_usd += float(cost or 0.0)
        current.models = tuple(dict.fromkeys([*current.models, *(models or [])]))
    if current is not None:
        close(current)
    return out


def usage_blocks(db: str | os.PathLike, since: str | date | None = None,
                 until: str | date | None = None, project: str | None = None,
                 timezone: str | None = None, now: datetime | None = None,
                 nested: bool = True, filters: dict | None = None
                 ) -> tuple[list[str], list[tuple], str]:
    """The 5-hour blocks as rows of :data:`COLUMNS` (times in the zone), and the zone.

    ``since``/``until``: days of the zone, kept when the block starts on them (as ccusage).
    ``now`` (default: the clock) decides the active block. ``nested=False`` leaves out the
    subagent calls nested in progress lines, as ccusage's blocks do (its daily report counts
    them, and so do brainlab's blocks by default: blocks add up to days). ``filters``:
    ``branch``, ``user``, ``machine`` values to keep, as ``usage``'s.
    """
    from brainlab.metrics.usage import parse_day

    since, until = parse_day(since, "since"), parse_day(until, "until")
    tz = resolve_timezone(timezone, settings_defaults()[0] if timezone is None else None)
    zone = ZoneInfo(tz)
    now = _utc(now) if now is not None else datetime.now(UTC)
    from brainlab.metrics.usage import DIMENSIONS, usage_by_sql

    kept = {k: v for k, v in {**(filters or {}), "project": project}.items() if v is not None}
    dims = ("model", *(() if nested else ("nested",)), *kept)
    where = "".join(f" AND {DIMENSIONS[k]} = $f_{k}" for k in kept)
    with reader(db, engine_only=True) as con:
        source = "cc_usage_rollup" if usage_rollup.is_current(con) else "usage_calls"
        sql = _BUCKETS.format(tokens=", ".join(TOKENS), where=where + ("" if nested else
                                                                      " AND NOT is_nested"),
                              macro=usage_by_sql(source, "bucket", dims))
        buckets = per_bucket(con.execute(sql, {"tz": "UTC", "first_day": "monday",
                                               **{f"f_{k}": v for k, v in kept.items()}}
                                         ).fetchall())
    rows = []
    for block in blocks_from_buckets(buckets, now):
        day = block.start.astimezone(zone).date()
        if (since and day < since) or (until and day > until):
            continue
        burn, projection = block.burn(), block.projection(now)
        rows.append((
            block.start.astimezone(zone), block.end.astimezone(zone),
            block.last_call.astimezone(zone) if block.last_call and not block.is_gap else None,
            block.is_active, block.is_gap, block.requests, *block.tokens, sum(block.tokens),
            block.cost_usd, list(block.models), burn[0] if burn else None,
            burn[1] if burn else None, *projection))
    return COLUMNS, rows, tz


def table_rows(rows: list[tuple]) -> tuple[list[str], list[tuple]]:
    """Rows for the terminal: a status column (ACTIVE with time left, gap, or duration)."""
    at = {name: i for i, name in enumerate(COLUMNS)}
    names = [c.name for c in TABLE_COLUMNS]
    out = []
    for row in rows:
        if row[at["is_gap"]]:
            hours = (row[at["block_end"]] - row[at["block_start"]]).total_seconds() / 3600
            status = f"gap {int(hours)}h"
        elif row[at["is_active"]]:
            status = (f"ACTIVE, {row[at['minutes_left']] // 60}h"
                      f" {row[at['minutes_left']] % 60:02d}m left")
            if row[at["projected_tokens"]] is not None:
                status += (f", projected {row[at['projected_tokens']]:,} tokens"
                           f" ${row[at['projected_cost_usd']]:.2f}")
        else:
            minutes = int((row[at["last_call"]] - row[at["block_start"]]).total_seconds() // 60)
            status = f"{minutes // 60}h {minutes % 60:02d}m"
        values = {**{n: row[at[n]] for n in COLUMNS}, "status": status}
        if row[at["is_gap"]]:
            values.update({n: None for n in ("requests", "input_tokens", "output_tokens",
                                             "total_tokens", "cost_usd")})
        values["block_start"] = row[at["block_start"]].replace(tzinfo=None)
        out.append(tuple(values[n] for n in names))
    return names, out


def blocks_table(db: str | os.PathLike, since: str | date | None = None,
                 until: str | date | None = None, project: str | None = None,
                 timezone: str | None = None, now: datetime | None = None,
                 filters: dict | None = None):
    """The blocks as a :class:`~brainlab.metrics.usage.UsageTable` (view ``blocks``).

    When no block matches, the table says what the store holds, as the other views do.
    """
    from brainlab.metrics.usage import usage_table

    names, rows, tz = usage_blocks(db, since, until, project, timezone, now, filters=filters)
    if not rows:
        found = usage_table(db, "daily", since, until, project, timezone=tz, filters=filters)
        found.view, found.columns, found.rows = "blocks", names, []
    else:
        from brainlab.metrics.usage import UsageTable

        found = UsageTable("blocks", names, rows, {"since": since, "until": until,
                                                   "project": project, **(filters or {})},
                           timezone=tz)
    found.display, found.table_columns = table_rows(rows), TABLE_COLUMNS
    return found
