"""Every `brainlab usage` answer before and after a change, byte for byte (issue 40 item 2).

Usage: python benchmarks/compare_usage_outputs.py --before-ref main [--demo]
       [--tree /work/shared/corpora/claude-code]

Builds the stores with each code (a temporary git worktree of REF for the baseline): the
corpus ingested, and with ``--demo`` the demo brain (``brainlab demo``). Then runs, with each
code on its own store, every usage view (daily, weekly, monthly, sessions, models, projects,
agents, tickets, branches, tools) in four zones and over a day range, weekly with Sunday
weeks, daily under each ``--cost-mode``, blocks, ``usage-who --by`` user, model, skill,
source, speed and ``usage-check``, as JSON; and compares the rows of the SQL views
(``usage_daily``, ``usage_daily_models``, ``usage_weekly``, ``usage_models``,
``usage_sessions``, ``usage_who``, ``ticket_usage``), costs to 1e-12 relative. Prints each
difference and the counts.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchkit import emit

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path("/work/shared/corpora/claude-code")
ZONES = ["UTC", "Europe/Paris", "Asia/Kathmandu", "America/New_York"]
VIEWS = ["daily", "weekly", "monthly", "sessions", "models", "projects", "agents", "tickets",
         "branches", "tools"]
SQL_VIEWS = ["usage_daily", "usage_daily_models", "usage_weekly", "usage_models",
             "usage_sessions", "usage_who", "ticket_usage"]


def commands() -> list[list[str]]:
    """The command matrix (arguments after ``brainlab``)."""
    out = []
    for view in VIEWS:
        out += [["usage", view, "--timezone", zone, "--json"] for zone in ZONES]
        out.append(["usage", view, "--timezone", "Europe/Paris", "--since", "2026-01-01",
                    "--until", "2026-11-20", "--json"])
    for zone in ZONES:
        out += [["usage", "weekly", "--timezone", zone, "--start-of-week", "sunday", "--json"],
                ["usage", "daily", "--timezone", zone, "--cost-mode", "auto", "--json"],
                ["usage", "daily", "--timezone", zone, "--cost-mode", "reported", "--json"],
                ["usage", "blocks", "--timezone", zone, "--json"]]
    out += [["usage-who", "--by", by, "--json"] for by in ("user", "model", "skill", "source",
                                                           "speed")]
    return [*out, ["usage-check"]]


def cli(code: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(code), "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd="/", env=env,
                          capture_output=True, text=True)
    return f"{done.stdout}\nexit {done.returncode}\n{done.stderr}"


def view_rows(code: Path, db: Path) -> dict:
    script = ("import json, sys; from brainlab.store import reader\n"
              "out = {}\n"
              f"with reader({str(db)!r}) as con:\n"
              f"    for v in {SQL_VIEWS!r}:\n"
              "        out[v] = [[repr(x) for x in r] for r in"
              " con.execute(f'SELECT * FROM {v} ORDER BY ALL').fetchall()]\n"
              "print(json.dumps(out))")
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def same_cell(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-12)
    except ValueError:
        return False


def build(code: Path, work: Path, tree: Path, demo: bool) -> dict[str, Path]:
    stores = {"corpus": work / "corpus.duckdb"}
    subprocess.run([sys.executable, "-m", "brainlab.cli", "ingest", "claude",
                    str(tree / "projects"), "--db", str(stores["corpus"])], cwd="/",
                   env={**os.environ, "PYTHONPATH": str(code)}, check=True, capture_output=True)
    if demo:
        subprocess.run([sys.executable, "-m", "brainlab.cli", "demo", "--dir",
                        str(work / "demo")], cwd="/", env={**os.environ, "PYTHONPATH": str(code)},
                       check=True, capture_output=True)
        stores["demo"] = work / "demo" / "brainlab.duckdb"
    return stores


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before-ref", default="main", metavar="REF")
    parser.add_argument("--tree", type=Path, default=CORPUS)
    parser.add_argument("--demo", action="store_true", help="Also the demo brain's store.")
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="compare_usage_"))
    before = work / "before-tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(before),
                    options.before_ref], check=True, capture_output=True)
    differ = 0
    try:
        theirs = build(before, work / "before", options.tree, options.demo)
        ours = build(ROOT, work / "after", options.tree, options.demo)
        for name in ours:
            n = 0
            for args in commands():
                a = cli(before, *args, "--db", str(theirs[name])).replace(str(theirs[name]), "DB")
                b = cli(ROOT, *args, "--db", str(ours[name])).replace(str(ours[name]), "DB")
                n += 1
                if a != b:
                    differ += 1
                    print(f"DIFFERS {name}: brainlab {' '.join(args)}")
            rows_a, rows_b = view_rows(before, theirs[name]), view_rows(ROOT, ours[name])
            for view in SQL_VIEWS:
                a, b = rows_a[view], rows_b[view]
                if len(a) != len(b) or not all(
                        len(x) == len(y) and all(map(same_cell, x, y))
                        for x, y in zip(a, b, strict=True)):
                    differ += 1
                    print(f"DIFFERS {name}: view {view} ({len(a)} -> {len(b)} rows)")
            print(f"{name}: {n} commands and {len(SQL_VIEWS)} views compared")
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)],
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{differ} difference(s)")
    emit("compare_usage_outputs", before_ref=options.before_ref, differences=differ)
    return 0


if __name__ == "__main__":
    sys.exit(main())
