"""Benchmark: what logged-versus-measured (issue 13) adds to a cold transcript ingest, and how
fast the audit answers on a year of synthetic brain.

Usage:
    PYTHONPATH=. python benchmarks/bench_measured.py [--size-gb 1.0] [--weeks 52] [--repeat 2]

Prints:
- cold ingest of the generated transcript tree (benchmarks/bench_claude_ingest.py's generator)
  twice per repeat, fresh database each time: the baseline with the issue-13 work switched off
  in this process (no cc_marks extraction in the parser, no cc_session_measures refresh), then
  the full ingest; the added share = full / baseline - 1 (target < 10 %), and the refresh alone;
- an incremental run after ~1% is appended, with and without the issue-13 work;
- on a ``--weeks`` synthetic brain with its transcripts: session_audit, session_audit_summary,
  session_matches and session_signals answered on a read-only connection (min-max of 5 runs;
  target for session_audit < 1 s).
The machine may be shared: every timed step prints min-max over its runs.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from bench_claude_ingest import append_one_percent, generate  # (shared generator)
from benchkit import emit

from brainlab.demo import build_store
from brainlab.store import open_writer, reader
from brainlab.store.measured import refresh_measures
from brainlab.transcripts import build as claude_build
from brainlab.transcripts import ingest as claude_ingest
from brainlab.transcripts import marks as claude_marks


@contextmanager
def issue13_off():
    """Switch off what issue 13 added to the ingest (parser marks, the measures refresh)."""
    # the marked tools are one set both decoders hold by reference: emptied in place, refilled
    marked = set(claude_build.MARKED_TOOLS)
    saved = (claude_marks.prompt_mark, claude_ingest.refresh_measures)
    claude_build.MARKED_TOOLS.clear()
    claude_marks.prompt_mark = lambda *args, **kwargs: None
    claude_ingest.refresh_measures = lambda con, sessions=None: 0
    try:
        yield
    finally:
        claude_build.MARKED_TOOLS.update(marked)
        claude_marks.prompt_mark, claude_ingest.refresh_measures = saved


def cold_ingest(tree: Path, work: Path) -> float:
    """Seconds for one cold ingest of ``tree`` into a fresh database (catalog set up first)."""
    db = work / "cold.duckdb"
    for path in work.glob("cold.duckdb*"):
        path.unlink()
    con = open_writer(db)  # schema and views created before the clock starts
    try:
        start = time.perf_counter()
        claude_ingest.ingest_claude(con, tree)
        return time.perf_counter() - start
    finally:
        con.close()


def incremental(tree: Path, work: Path, size: int) -> tuple[float, float]:
    """After a cold ingest, append ~1% and time the incremental run: (issue 13 off, full)."""
    for name in ("inc_off", "inc_on"):
        shutil.copy(work / "cold.duckdb", work / f"{name}.duckdb")
    append_one_percent(tree, size)
    seconds = []
    for name in ("inc_off", "inc_on"):
        con = open_writer(work / f"{name}.duckdb")
        try:
            start = time.perf_counter()
            if name == "inc_off":
                with issue13_off():
                    claude_ingest.ingest_claude(con, tree)
            else:
                claude_ingest.ingest_claude(con, tree)
            seconds.append(time.perf_counter() - start)
        finally:
            con.close()
    return seconds[0], seconds[1]


def refresh_seconds(work: Path) -> float:
    """Seconds for refresh_measures alone on the last cold database."""
    con = open_writer(work / "cold.duckdb")
    try:
        start = time.perf_counter()
        refresh_measures(con)
        return time.perf_counter() - start
    finally:
        con.close()


def year_of_brain(work: Path, weeks: int) -> Path:
    """Synthesize ``weeks`` of brain + transcripts and ingest both; return the database."""

    root = work / "brain"
    db = work / "year.duckdb"
    build_store(root, db, weeks=weeks, seed=7, workers=1)
    return db


def _span(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f} s" if len(values) > 1 else f"{values[0]:.2f} s"


def main() -> int:
    """Run both benchmarks and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--weeks", type=int, default=52)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--dir", type=Path, default=None, help="Work folder (default: temp).")
    args = parser.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="bench-measured-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        tree = work / "tree"
        files, size = generate(tree, int(args.size_gb * 1e9))
        print(f"tree: {files} files, {size / 1e6:,.0f} MB")
        base, full, refresh = [], [], []
        for _ in range(args.repeat):
            with issue13_off():
                base.append(cold_ingest(tree, work))
            full.append(cold_ingest(tree, work))
            refresh.append(refresh_seconds(work))
        added = min(full) / min(base) - 1
        print(f"cold ingest, issue 13 off (baseline): {_span(base)}")
        print(f"cold ingest, full:                    {_span(full)}")
        print(f"  of which cc_session_measures refresh: {_span(refresh)}")
        print(f"added by issue 13 (min/min): {100 * added:+.1f} % (target < 10 %); "
              f"refresh alone / baseline: {100 * min(refresh) / min(base):.1f}-"
              f"{100 * max(refresh) / min(base):.1f} %")
        off, on = incremental(tree, work, size)
        print(f"incremental run after ~1% appended: issue 13 off {off:.2f} s, full {on:.2f} s")
        emit("measured", files=files, mb=size / 1e6, cold_off_s=min(base), cold_full_s=min(full),
             refresh_s=min(refresh), added_pct=100 * added, incremental_off_s=off,
             incremental_full_s=on)
        db = year_of_brain(work, args.weeks)
        with reader(db) as con:
            con.execute("SET enable_progress_bar = false")
            counts = con.execute("SELECT (SELECT count(*) FROM stg_metabolism_sessions),"
                                 " (SELECT count(*) FROM cc_session_measures)").fetchone()
            print(f"{args.weeks}-week brain: {counts[0]} logs, {counts[1]} transcript sessions")
            for view in ("session_audit", "session_audit_summary", "session_matches",
                         "session_signals"):
                runs = []
                for _ in range(5):
                    start = time.perf_counter()
                    rows = len(con.execute(f"SELECT * FROM {view}").fetchall())
                    runs.append(time.perf_counter() - start)
                target = " (target < 1 s)" if view == "session_audit" else ""
                print(f"{view}: {rows} rows in {_span(runs)}{target}")
    finally:
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
