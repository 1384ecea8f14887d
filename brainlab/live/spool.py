"""What the live commands hand to the next ingest: spooled transcript paths and limit snapshots.

``hook ingest`` appends the transcripts a hook named to ``spool.jsonl`` before anything else,
so a path is never lost: when another process holds the store, the next ingest of any kind
(``brainlab ingest claude``, the next hook) takes it. The status line appends what Claude
Code told it about rate limits and the context window to ``limit_snapshots.jsonl``
(:func:`brainlab.live.statusline.record_limits`); :func:`drain` loads them into the
``limit_snapshots`` table. Both files are taken by renaming them under the store's write
lock, so lines appended meanwhile go to a new file, and a failed drain leaves its taken
files for the next one.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from brainlab.live import cache
from brainlab.spec import ranges

TAKEN = ".taking"


def add(paths: list[str]) -> None:
    """Append ``paths`` to the spool (one JSON line each)."""
    spool = cache.file(cache.SPOOL_NAME)
    for path in paths:
        cache.append_line(spool, {"path": path, "ts": round(time.time(), 3)})


def take(name: str) -> list[Path]:
    """Rename ``name`` aside and return it with every file an earlier failed drain left."""
    folder = Path(cache.live_dir())
    current = folder / name
    if current.exists():
        try:
            os.replace(current, folder / f"{name}.{os.getpid()}.{time.time_ns()}{TAKEN}")
        except OSError:
            pass
    return sorted(p for p in folder.iterdir()
                  if p.name.startswith(name + ".") and p.name.endswith(TAKEN))


def read_lines(files: list[Path]) -> list[tuple[str, int, dict | None]]:
    """(file, line number, JSON object or None when the line is malformed) of ``files``."""
    out = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError:
                value = None
            out.append((str(path), number, value if isinstance(value, dict) else None))
    return out


def spooled_paths(lines) -> list[str]:
    """The distinct transcript paths of spool lines, in order."""
    seen: dict[str, None] = {}
    for _file, _number, value in lines:
        path = value.get("path") if value else None
        if isinstance(path, str) and path.endswith(".jsonl"):
            seen.setdefault(path, None)
    return list(seen)


def drain(con, prices=None, skip_under: str | os.PathLike | None = None) -> dict:
    """Ingest the spooled transcripts and load the limit snapshots, on ``con`` (the writer).

    ``skip_under``: a root the caller has just ingested (its files are not read twice).
    Returns counts for the caller's message: ``spooled`` files ingested, ``snapshots``.
    """
    spool_files = take(cache.SPOOL_NAME)
    done = ingest_paths(con, spooled_paths(read_lines(spool_files)), prices, skip_under)
    for path in spool_files:
        path.unlink(missing_ok=True)
    snapshots = load_limits(con)
    if skip_under and (done or snapshots):  # an `ingest claude` run: its summary does not say it
        cache.log(f"ingest claude: also {done} spooled transcript(s), {snapshots} limit"
                  " snapshot(s)")
    return {"spooled": done, "snapshots": snapshots}


def ingest_paths(con, paths: list[str], prices=None,
                 skip_under: str | os.PathLike | None = None) -> int:
    """Ingest the spooled transcript ``paths`` on ``con`` in one run; how many were read.

    Each file is read incrementally, in its own transaction. Paths under ``skip_under``
    are left out (the caller has just ingested that root), and so are files gone since
    they were spooled (the ingest of their root records that).
    """
    from brainlab.transcripts.ingest import ingest_claude
    from brainlab.transcripts.roots import claude_transcript

    skip = str(Path(skip_under).resolve()) + os.sep if skip_under else None
    files = []
    for path in paths:
        if skip and str(Path(path).resolve()).startswith(skip):
            continue
        if not Path(path).is_file():
            cache.log(f"spool: {path} no longer exists, dropped")
            continue
        # checked again as the hook checked it (issue 46 item 4): a link swapped since the
        # hook spooled the path must not lead the drain out of Claude's folders
        if claude_transcript(path)[0] is None:
            from brainlab.common.plaintext import visible
            from brainlab.sources.redact import stored_path

            cache.log(f"spool: {visible(stored_path(path))} refused (no longer a transcript"
                      " inside Claude's folders), dropped")
            continue
        files.append(path)
    if files:
        ingest_claude(con, files if len(files) > 1 else files[0], prices)
    return len(files)


LIMIT_COLUMNS = ("snapshot_at", "session_id", "model_id", "five_hour_pct",
                 "five_hour_resets_at", "seven_day_pct", "seven_day_resets_at",
                 "context_used_pct", "context_window_size", "total_cost_usd",
                 "total_input_tokens", "total_output_tokens", "source_file", "line")


def load_limits(con) -> int:
    """Insert the taken snapshot lines into ``limit_snapshots``; bad lines become ingest errors.

    Every number is range-checked (spec/ranges.py, issue 47 item 1): a snapshot whose own
    time is outside the window is an error row and not stored; a field out of range is an
    error row naming it and stored as NULL, the snapshot's other fields kept. A cached file
    an older status line wrote (``-Infinity``, ``-1e308``) is read the same way.
    """
    files = take(cache.LIMITS_NAME)
    if not files:
        return 0
    rows, errors = [], []
    for file, number, value in read_lines(files):
        problems: list[str] = []
        row = _limit_row(value, file, number, problems) if value else None
        if row is None and not problems:
            problems.append("limit snapshot line is not a snapshot object")
        errors.extend((file, number, reason) for reason in problems)
        if row is not None:
            rows.append(row)
    con.execute("BEGIN TRANSACTION")
    try:
        if rows:
            con.execute("CREATE OR REPLACE TEMP TABLE live_limits_new AS SELECT * FROM"
                        " limit_snapshots LIMIT 0")
            marks = ", ".join("?" * len(LIMIT_COLUMNS))
            con.executemany(f"INSERT INTO live_limits_new VALUES ({marks})", rows)
            con.execute("INSERT INTO limit_snapshots SELECT n.* FROM live_limits_new n"
                        " WHERE NOT EXISTS (SELECT 1 FROM limit_snapshots s WHERE"
                        " s.snapshot_at = n.snapshot_at AND s.session_id IS NOT DISTINCT FROM"
                        " n.session_id)")
            con.execute("DROP TABLE live_limits_new")
        for file, number, reason in errors:
            con.execute("INSERT INTO ingest_errors (source, file, line, severity, reason)"
                        " VALUES ('limits', ?, ?, 'error', ?)", [file, number, reason])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    for path in files:
        path.unlink(missing_ok=True)
    return len(rows)


# each number of a snapshot line and the range it must fall in (spec/ranges.py)
_LIMIT_RANGES = {"five_hour_pct": ranges.PERCENT, "seven_day_pct": ranges.PERCENT,
                 "context_used_pct": ranges.PERCENT, "context_window_size": ranges.TOKENS,
                 "total_cost_usd": ranges.COST_USD, "total_input_tokens": ranges.SESSION_TOKENS,
                 "total_output_tokens": ranges.SESSION_TOKENS}


def _limit_row(value: dict, file: str, number: int, problems: list[str]) -> tuple | None:
    """One ``limit_snapshots`` row of a snapshot line, or None; ``problems`` gets each reason."""
    from datetime import UTC, datetime

    def number_or_none(key):
        v = value.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        bound = _LIMIT_RANGES.get(key)
        if bound is not None and (problem := bound.problem(v)):
            problems.append(f"limit snapshot {key}: {problem} ({bound.name},"
                            " spec/ranges.py): not stored")
            return None
        return v if bound is not None and bound.whole else float(v)

    def stamp(key, days=ranges.FUTURE_DAYS):
        seconds = value.get(key)
        if seconds is None or isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            return None
        try:
            moment = datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None)
        except (OverflowError, OSError, ValueError):
            moment = None
        problem = "not a time" if moment is None else ranges.time_problem(moment, days=days)
        if problem:
            problems.append(f"limit snapshot {key} {str(seconds)[:30]}: {problem}"
                            " (spec/ranges.py): not stored")
            return None
        return moment

    ts = stamp("ts")
    if ts is None:
        return None
    text = [v if isinstance(v := value.get(k), str) else None for k in ("session_id", "model_id")]
    ahead = ranges.RESETS_AHEAD_DAYS
    return (ts, *text, number_or_none("five_hour_pct"), stamp("five_hour_resets_at", ahead),
            number_or_none("seven_day_pct"), stamp("seven_day_resets_at", ahead),
            number_or_none("context_used_pct"), number_or_none("context_window_size"),
            number_or_none("total_cost_usd"), number_or_none("total_input_tokens"),
            number_or_none("total_output_tokens"), file, number)


def pending() -> bool:
    """True when the hooks or the status line left anything for the next ingest (one listdir)."""
    folder = cache.live_dir(create=False)
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    return any(name.startswith((cache.SPOOL_NAME, cache.LIMITS_NAME)) for name in names)


def waiting() -> bool:
    """True when transcript paths wait in the spool (a hook's, or a killed drain's taken file)."""
    try:
        names = os.listdir(cache.live_dir(create=False))
    except OSError:
        return False
    return any(name.startswith(cache.SPOOL_NAME) for name in names)


def drain_db(db: str | os.PathLike, prices=None, skip_under=None) -> dict | None:
    """:func:`drain` into the store at ``db`` when something is pending (every ingest calls it).

    The CLI's ingest commands call this once their own run has closed the store, so the store
    layer never imports this package (DESIGN: data flows one way). None when nothing waited.
    """
    if not pending():
        return None
    from brainlab.store import open_writer

    con = open_writer(db)
    try:
        return drain(con, prices, skip_under)
    finally:
        con.close()


def drained_line(done: dict | None) -> str | None:
    """What :func:`drain_db` took from the spool, as the line every ingest prints.

    None when it took nothing.
    """
    if not done or not (done["spooled"] or done["snapshots"]):
        return None
    return (f"live: {done['spooled']} spooled transcript(s), {done['snapshots']}"
            " limit snapshot(s) taken from the hooks' spool")
