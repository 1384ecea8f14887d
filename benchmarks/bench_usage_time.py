"""`usage` views before and after a change, and `usage blocks` and `--timezone` views (issues 24, 40).

Usage: python benchmarks/bench_usage_time.py [--repeat 7] [--copies 1]
       [--tree /work/shared/corpora/claude-code] [--before /work/main | --before-ref main]

Ingests the corpus (``--copies N``: N copies of it under distinct session ids and shifted
days, for a bigger store) once with this tree's code and, with ``--before CHECKOUT`` (or
``--before-ref REF``: a temporary git worktree of REF, removed at the end), once with that
code (the baseline). Then times, as a user runs them (a fresh ``python -m brainlab.cli``
per run, from ``/``), interleaved one of each per round so machine load hits them alike:
with a baseline, ``usage daily --timezone UTC``, ``usage daily --timezone Europe/Paris`` and
``usage weekly --timezone Asia/Kathmandu --start-of-week sunday`` by both codes, each pair's
ratio printed (issue 40: usage summed by the macro usage_by must answer at least as fast);
and this tree's ``usage daily --timezone UTC``, ``--timezone Europe/Paris``,
``weekly --timezone Asia/Kathmandu --start-of-week sunday``, ``sessions --timezone
America/New_York``, ``blocks --timezone Europe/Paris``, and ``tools`` (cost by tool, from
the calls, not the roll-up) beside ``agents`` (also from the calls). Prints median and range per
command, the roll-up's row count, and the load average before and after. Both trees are
compiled first and run with bytecode caching on (:func:`bench_claude_ingest.user_env`): with
``PYTHONDONTWRITEBYTECODE=1``, as some sandboxes set, each run would measure the compiler.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_claude_ingest import compile_package, user_env  # this folder: first on the path
from benchkit import emit  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path("/work/shared/corpora/claude-code")


def _copy_tree(tree: Path, out: Path, copies: int) -> Path:
    """``copies`` copies of the corpus: session ids and timestamps' years made distinct."""
    root = out / "projects"
    for n in range(copies):
        for path in (tree / "projects").rglob("*.jsonl"):
            rel = path.relative_to(tree / "projects")
            target = root / f"c{n}-{rel.parts[0]}" / Path(*rel.parts[1:])
            target.parent.mkdir(parents=True, exist_ok=True)
            text = path.read_text(encoding="utf-8", errors="replace")
            if n:  # another session id space and 5 weeks later: distinct calls and days
                text = text.replace('"sessionId":"', f'"sessionId":"c{n}-').replace(
                    '"id":"msg_', f'"id":"msg_c{n}').replace('"requestId":"req_',
                                                              f'"requestId":"req_c{n}')
            target.write_text(text, encoding="utf-8")
    return root


def _ingest(code: Path, projects: Path, db: Path) -> None:
    env = user_env({"PYTHONPATH": str(code)})
    subprocess.run([sys.executable, "-m", "brainlab.cli", "ingest", "claude", str(projects),
                    "--db", str(db)], cwd="/", env=env, check=True, capture_output=True)


def _run(code: Path, args: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one command in a fresh interpreter.

    CPU is what a busy machine does not stretch: at load 15 on 2 cores the wall clock of
    one command varies 5x from run to run, its CPU by a few percent.
    """
    env = user_env({"PYTHONPATH": str(code), "COLUMNS": "100"})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd="/", env=env,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(args)} failed: {done.stderr.strip()}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


PAIRED = [  # timed by the baseline's code and by this tree's (issue 40)
    ("usage daily --timezone UTC", ["daily", "--timezone", "UTC"]),
    ("usage daily --timezone Europe/Paris", ["daily", "--timezone", "Europe/Paris"]),
    ("usage weekly Asia/Kathmandu sunday", ["weekly", "--timezone", "Asia/Kathmandu",
                                            "--start-of-week", "sunday"]),
]


def _worktree(ref: str, work: Path) -> Path:
    """A detached git worktree of ``ref`` of this repository, in ``work``."""
    target = work / "before-tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(target), ref],
                   check=True, capture_output=True)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--tree", type=Path, default=CORPUS)
    parser.add_argument("--before", type=Path, default=None,
                        help="Another checkout whose `usage` views are the baseline.")
    parser.add_argument("--before-ref", default=None, metavar="REF",
                        help="A git ref of this repository as the baseline (a worktree).")
    options = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    work = Path(tempfile.mkdtemp(prefix="bench_usage_time_"))
    before = options.before
    try:
        if options.before_ref:
            before = _worktree(options.before_ref, work)
        for code in (ROOT, *([before] if before else [])):  # both start from .pyc, as a
            compile_package(code)  # user's install does (not recompiling each run)
        projects = (options.tree / "projects" if options.copies == 1
                    else _copy_tree(options.tree, work, options.copies))
        ours = work / "ours.duckdb"
        _ingest(ROOT, projects, ours)
        commands: list[tuple[str, Path, list[str]]] = []
        if before:
            theirs = work / "before.duckdb"
            _ingest(before, projects, theirs)
            for label, args in PAIRED:
                commands.append((f"before: {label}", before,
                                 ["usage", *args, "--db", str(theirs)]))
        for label, args in [
                *PAIRED,
                ("usage sessions America/New_York", ["sessions", "--timezone",
                                                     "America/New_York"]),
                ("usage blocks --timezone Europe/Paris", ["blocks", "--timezone",
                                                          "Europe/Paris"]),
                ("usage agents --timezone UTC", ["agents", "--timezone", "UTC"]),
                ("usage tools --timezone UTC", ["tools", "--timezone", "UTC"])]:
            commands.append((label, ROOT, ["usage", *args, "--db", str(ours)]))
        for _label, code, args in commands:  # warm the page cache and bytecode
            _run(code, args)
        times: dict[str, list[float]] = {label: [] for label, _c, _a in commands}
        cpu: dict[str, list[float]] = {label: [] for label, _c, _a in commands}
        for _ in range(options.repeat):
            for label, code, args in commands:
                wall, used = _run(code, args)
                times[label].append(wall)
                cpu[label].append(used)
        from brainlab.store.connection import engine

        con = engine().connect(str(ours), read_only=True)
        rows = con.execute("SELECT count(*) FROM cc_usage_rollup").fetchone()[0]
        con.close()
        print(f"store: {options.copies} cop{'y' if options.copies == 1 else 'ies'} of"
              f" {options.tree}; cc_usage_rollup rows: {rows}; {options.repeat} rounds")
        for label, values in times.items():
            print(f"  {label:44s} median {statistics.median(values) * 1000:6.0f} ms"
                  f"  (min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f}),"
                  f" CPU {statistics.median(cpu[label]) * 1000:4.0f} ms")
        if before:
            print(f"after / before (medians; baseline: {options.before_ref or before}):")
            for label, _args in PAIRED:
                theirs = f"before: {label}"
                wall = statistics.median(times[label]) / statistics.median(times[theirs])
                used = statistics.median(cpu[label]) / statistics.median(cpu[theirs])
                print(f"  {label:44s} wall {wall:5.2f}, CPU {used:5.2f}")
    finally:
        if options.before_ref and before is not None and before.exists():
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(before)], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average after: {os.getloadavg()}")
    emit("usage_time", **{label.strip(): statistics.median(values)
                          for label, values in times.items()},
         **{f"cpu {label.strip()}": statistics.median(values) for label, values in cpu.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
