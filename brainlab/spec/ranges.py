"""The range every number brainlab ingests must fall in, each with its reason (issue 47 item 1).

Every source checks its numbers against these ranges at ingest: transcripts (usage counts,
``usage.iterations``, ``costUSD``, timestamps), telemetry (``api_request`` tokens, cost and
durations, metric points' times, values and counts, span times), the status line's limit
snapshots, and the brain's own files (metabolism logs, claims). A value outside its range is
not stored: it becomes an ``ingest_errors`` row naming the file, the line and the field, and
the rest of the record and of the file loads.

Why ranges and not only "fits a BIGINT": a stored value the column accepts can still make a
read fail later. Two tokens counts of 2^62 overflow an INT64 ``sum``; a timestamp of year
50,000 is a valid DuckDB TIMESTAMP that Python's ``datetime`` cannot hold; NaN makes every
comparison false and infinity every total infinite. With each count at most
:data:`TOKENS` ``.high`` (10^9), an INT64 sum overflows only past 9.2 billion rows, and DOUBLE
sums of bounded costs stay finite.

Imports nothing of brainlab (the spec layer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta


@dataclass(frozen=True)
class Range:
    """A closed interval ``low``..``high`` of finite numbers; ``whole``: integers only."""

    name: str
    low: float
    high: float
    whole: bool
    reason: str

    def problem(self, value) -> str | None:
        """Why ``value`` (an int or float, not a bool) is outside this range, or None."""
        if isinstance(value, float):
            if not math.isfinite(value):
                return f"{value!r} is not a finite number"
            if self.whole and not value.is_integer():
                return f"{value!r} is not a whole number"
        if not self.low <= value <= self.high:
            return f"{_short(value)} is outside {_short(self.low)}..{_short(self.high)}"
        return None

    def fits(self, value) -> bool:
        """True when ``value`` is a number inside the range."""
        return not isinstance(value, bool) and isinstance(value, int | float) \
            and self.problem(value) is None


def _short(value) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        value = int(value)
    if isinstance(value, int) and abs(value) >= 10**6:
        return f"{value:.3g}".replace("e+", "e")
    return repr(value)


# --- counts -----------------------------------------------------------------------------------
TOKENS = Range(
    "tokens", 0, 10**9, True,
    "one API call's token count (input, output, cache read or write, an advisor iteration's,"
    " a compaction's before/after): the largest context window is 10^6 tokens, so 10^9 is"
    " a thousand times past any real call, and 9.2 billion such rows still sum inside INT64")
SESSION_TOKENS = Range(
    "session tokens", 0, 10**12, True,
    "a whole session's tokens (a metabolism log's tokens_used, the status line's session"
    " totals): a thousand calls at the per-call bound")
COUNT = Range(
    "count", 0, 10**12, True,
    "any other count (event sequence, attempt, prompt length, commits, histogram counts):"
    " non-negative, and small enough that sums stay inside INT64")
SMALL_COUNT = Range(
    "small count", 0, 10**6, True,
    "a count a brain file logs per session (commits, to-dos closed, files touched, ADRs,"
    " insights): stored as INTEGER; a million is far past any session")
# --- money and time spans ---------------------------------------------------------------------
COST_USD = Range(
    "cost in USD", 0.0, 1e5, False,
    "one call's or one session's cost: a 10^6-token call at the dearest list price costs"
    " under $100; $100,000 leaves room for any price without letting 1e308 or inf in")
DURATION_MS = Range(
    "duration in ms", 0.0, 7 * 86_400_000.0, False,
    "an API request's duration or time to first token: a week is far past any request")
MINUTES = Range(
    "minutes", 0.0, 525_600.0, False,
    "a session's duration in minutes (a metabolism log): at most a year")
HOURS = Range(
    "hours", 0.0, 87_600.0, False,
    "a claim's time to live in hours: at most ten years")
PERCENT = Range(
    "percent", 0.0, 1000.0, False,
    "a percentage (context used, a rate limit's use, a context peak): above 100 happens when"
    " a limit is overrun, above 1000 is not a reading")
SCORE = Range(
    "score", -1e6, 1e6, False,
    "a free number a brain file logs (health score): finite and far from DOUBLE's limits")
METRIC_VALUE = Range(
    "metric value", -1e15, 1e15, False,
    "a metric point's value or sum (tokens, cost, seconds, counts, cumulative or delta):"
    " finite, and small enough that sums over years of points stay exact in DOUBLE")

# --- timestamps -------------------------------------------------------------------------------
EARLIEST = datetime(2020, 1, 1)  # naive UTC: before Claude Code, any transcript or telemetry
FUTURE_DAYS = 2  # a timestamp later than this many days after the run is a clock gone wrong
RESETS_AHEAD_DAYS = 40  # a rate limit resets at most a week (a month for plans) ahead
TIME_REASON = (f"a moment brainlab records (a call, an event, a metric point, a snapshot):"
               f" from {EARLIEST:%Y-%m-%d} (before any Claude Code) to {FUTURE_DAYS} days after"
               " the run (a machine's clock may run a little ahead; a year 50,000 would break"
               " every read that turns it into a Python datetime)")


def latest(now: datetime | None = None, days: int = FUTURE_DAYS) -> datetime:
    """The latest acceptable moment (naive UTC): ``days`` after ``now`` (default: the run)."""
    now = now or datetime.now(UTC).replace(tzinfo=None)
    return now + timedelta(days=days)


def time_problem(moment: datetime, now: datetime | None = None,
                 days: int = FUTURE_DAYS) -> str | None:
    """Why the naive UTC ``moment`` is outside EARLIEST..latest(), or None."""
    if moment < EARLIEST:
        return f"{moment:%Y-%m-%d} is before {EARLIEST:%Y-%m-%d}"
    end = latest(now, days)
    if moment > end:
        return f"{moment.isoformat(sep=' ')[:19]} is more than {days} days after the run"
    return None


_EPOCH = datetime(1970, 1, 1)


def micros_window(now: datetime | None = None, days: int = FUTURE_DAYS) -> tuple[int, int]:
    """EARLIEST..latest() as microseconds since the epoch (telemetry's unit once read)."""
    first = (EARLIEST - _EPOCH) // timedelta(microseconds=1)
    return first, (latest(now, days) - _EPOCH) // timedelta(microseconds=1)


ALL = (TOKENS, SESSION_TOKENS, COUNT, SMALL_COUNT, COST_USD, DURATION_MS, MINUTES, HOURS, PERCENT, SCORE,
       METRIC_VALUE)


def describe() -> list[str]:
    """One line per range and the time window, as docs/otel.md and docs/security.md show them."""
    lines = [f"{r.name}: {_short(r.low)}..{_short(r.high)}{' (whole)' if r.whole else ''}"
             f" - {r.reason}" for r in ALL]
    lines.append(f"timestamps: {EARLIEST:%Y-%m-%d}..run + {FUTURE_DAYS} days - {TIME_REASON}")
    return lines


# --- telemetry input limits (issue 47 item 2; brainlab/otel/framing.py applies them) --------
MESSAGE_MAX_BYTES = 16 * 1024 * 1024
"""One telemetry line or framed message, after decompression: the collector's gRPC receiver
takes 4 MiB messages by default and its file exporter writes one export request per line, so
16 MiB is four times past a real one. A longer line or message is an error row, skipped."""
DECOMPRESS_RATIO_MAX = 100
"""A zstd file or frame may decompress to this many times its compressed size (or to
MESSAGE_MAX_BYTES, whichever is larger): OTLP JSON compresses 10 to 50 times; a bomb
(16 KB to gigabytes) is tens of thousands of times. Past it: an error row, the rest not read."""
MESSAGE_WEIGHT_BYTES = 512
"""What one message costs in memory beyond its bytes (its objects, its rows): a batch counts
each message as its size plus this, so a million empty lines fill a batch as 512 MB would."""
READ_BATCH_BYTES = 64 * 1024 * 1024
"""Decompressed bytes decoded and written per transaction (each message weighing its size plus
MESSAGE_WEIGHT_BYTES): memory stays bounded whatever the file's size or its number of lines
(rows of one batch, not of the whole file, are held at once)."""
PROBLEMS_PER_READ = 1000
"""Problem rows one batch records before the rest are counted in one last row: a file of a
million bad lines gives a thousand rows and a count, not a million rows in memory."""
STALE_PARTIAL_MINUTES = 10
"""A file not modified for this long whose last line or frame is cut short is finished: the
cut part is an error row (before: "still being written", forever). The collector flushes
every second or so; ten minutes without a write is a writer that stopped."""
