"""Every option of every read command with hostile values, through the console script.

Usage:
    PYTHONPATH=. python benchmarks/fuzz_options.py [--db data/demo/brainlab.duckdb]

Issue 47 item 4: no option value a user can type may end in "This is a brainlab bug" or a
traceback. Each option that takes a value gets ``nan``, ``-1``, 30 nines, ``1e400``, an ESC
sequence, 300 characters, a bad date and ``0``; the commands that write (ingest, export,
hooks, lab, report, demo, synth, spark) are left out. All cases run in one child process
(tests/test_hostile_settings.py's driver), each with a 60 s alarm. Prints the number of
cases, then each (command, option, value) whose error was a bug, a traceback or over 1,000
characters; exit 1 when any. Too slow for the suite (minutes on 2 shared cores): the suite
holds one case of each class found here.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchkit import emit

HERE = Path(__file__).resolve().parent.parent
VALUES = ("nan", "-1", "9" * 30, "1e400", "\x1b[2J", "x" * 300, "2026-13-45", "0")
SKIP = {"ingest", "hook", "hooks", "lab", "report", "demo", "synth", "export", "attach", "spark",
        "notebooks", "statusline"}


def cases(db: str, cwd: str) -> list[dict]:
    import click

    import brainlab.cli as cli

    found = []

    def walk(group: click.Group, path: list[str]) -> None:
        for name, command in group.commands.items():
            if not path and name in SKIP:
                continue
            if isinstance(command, click.Group):
                walk(command, [*path, name])
                continue
            if any(isinstance(p, click.Argument) and p.required for p in command.params):
                continue
            has_db = any(p.name == "db" for p in command.params)
            for p in command.params:
                if isinstance(p, click.Option) and not p.is_flag and p.name != "db" \
                        and not p.hidden:
                    for value in VALUES:
                        found.append({"argv": [*path, name, *(["--db", db] if has_db else []),
                                               p.opts[0], value], "cwd": cwd})

    walk(cli.main, [])
    return found


def suite_driver() -> str:
    """tests/test_hostile_settings.py's DRIVER (the child that runs every case), read from the
    file's syntax tree: the suite and this script run cases the same way."""
    tree = ast.parse((HERE / "tests" / "test_hostile_settings.py").read_text(encoding="utf-8"))
    return next(ast.literal_eval(node.value) for node in tree.body
                if isinstance(node, ast.Assign)
                and any(getattr(t, "id", None) == "DRIVER" for t in node.targets))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default=str(HERE / "data" / "demo" / "brainlab.duckdb"))
    args = parser.parse_args()
    driver = suite_driver().replace("import contextlib, io, json, os, sys\n",
                            "import contextlib, io, json, os, signal, sys\n"
                            "def _alarm(*a):\n    raise TimeoutError('CASE TIMEOUT 60 s')\n"
                            "signal.signal(signal.SIGALRM, _alarm)\n")
    driver = driver.replace("            root.run()", "            signal.alarm(60)\n"
                                                       "            root.run()")
    with tempfile.TemporaryDirectory() as cwd:
        todo = cases(args.db, cwd)
        done = subprocess.run([sys.executable, "-c", driver], input=json.dumps(todo),
                              capture_output=True, text=True, timeout=3600)
    results = json.loads(done.stdout.splitlines()[-1])
    bad = [(c["argv"][:2] + c["argv"][-2:], r["err"][:200]) for c, r in
           zip(todo, results, strict=True)
           if "brainlab bug" in r["err"] or "Traceback" in r["err"] or len(r["err"]) > 1000]
    print(f"{len(todo)} cases, {len(bad)} ended in a bug, a traceback or an error over 1,000"
          " characters")
    for argv, err in bad:
        print(" ", [a[:30] for a in argv], err.splitlines()[0] if err else "")
    emit("fuzz_options", cases=len(todo), bugs=len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
