"""CPU-s of the frequent ``brainlab`` commands in a fresh process, this checkout against --before REV.

The suite starts ~690 ``brainlab`` processes and a user's hooks start one per event, so each
command's fixed cost (imports, store creation, derived tables) counts (issue 40, the suite's
10 minutes). Each case runs as a user runs it (``python -m brainlab.cli ...``, from a neutral
folder, with a cache folder of the benchmark's own: the empty-store template is built once,
before the timed rounds); the two trees (this checkout and ``git archive REV``, imported
through ``PYTHONPATH``) run interleaved, one of each per round, so machine load hits both
alike. Prints the median CPU-s (user + system of the process and its children) with its
range per command and side, the difference, whether both sides printed the same bytes, and
the heavy packages each side imported.

Usage: python benchmarks/bench_cli_cpu.py [--before main] [--repeat 9] [--only ingest]
       [--demo data/demo/brainlab.duckdb]   # built with `brainlab demo --dir` when missing
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from benchkit import REPO, checkout, emit, span

SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpora" / "claude-code" / "projects"
TEMPLATE_BRAIN = SHARED / "reference" / "cortex-template" / "Tetardtek__Cortex-template"
HEAVY = ("pandas", "numpy", "pyarrow", "yaml", "altair", "jinja2", "duckdb", "jsonschema")
SESSION = "5e7b3c1a-0000-4000-8000-000000000001"


@dataclass
class Case:
    """One command: its arguments, a preparation before each run, its standard input."""

    name: str
    args: list[str]
    prepare: list[Path] = field(default_factory=list)  # removed before each run (a new store)
    stdin: bytes = b""
    runs: dict[str, list[float]] = field(default_factory=dict)
    outputs: dict[str, set[bytes]] = field(default_factory=dict)


def small_transcripts(into: Path) -> Path:
    """A projects folder holding one session's first 20 lines (a real corpus file's)."""
    source = min(CORPUS.glob("*/*.jsonl"), key=lambda p: (p.stat().st_size < 100_000, p.name))
    folder = into / "projects" / "p"
    folder.mkdir(parents=True)
    lines = source.read_bytes().splitlines(keepends=True)[:20]
    (folder / f"{SESSION}.jsonl").write_bytes(b"".join(lines))
    return into / "projects"


def isolated_env(tmp: Path) -> dict[str, str]:
    """This environment without brainlab's variables or the bytecode switch, and a HOME, a
    cache (the empty-store template) and a Claude config folder of the benchmark's own."""
    env = {key: value for key, value in os.environ.items()
           if key != "PYTHONDONTWRITEBYTECODE" and not key.startswith("BRAINLAB_")}
    env.update(BRAINLAB_CACHE_DIR=str(tmp / "cache"), HOME=str(tmp / "home"),
               XDG_CONFIG_HOME=str(tmp / "home" / ".config"),
               CLAUDE_CONFIG_DIR=str(tmp / "claude"))  # the hook reads only its transcripts
    return env


def run(python: str, tree: Path, case: Case, cwd: Path, env: dict,
        argv: list[str] | None = None) -> tuple[float, bytes]:
    """(CPU-s, stdout + stderr) of one run of ``case`` (or of ``python argv``) with
    ``tree``'s brainlab."""
    for path in case.prepare:
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
        Path(f"{path}.wal").unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    argv = argv if argv is not None else ["-m", "brainlab.cli", *case.args]
    done = subprocess.run([python, *argv], input=case.stdin,
                          capture_output=True, cwd=cwd, env={**env, "PYTHONPATH": str(tree)},
                          timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"{case.name} failed ({done.returncode}): {done.stderr.decode()[-800:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stdout + b"\0" + done.stderr


def heavy_imports(python: str, tree: Path, case: Case, cwd: Path, env: dict) -> list[str]:
    """The heavy top-level packages one run of ``case`` imports (``-X importtime``)."""
    for path in case.prepare:
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    done = subprocess.run([python, "-X", "importtime", "-m", "brainlab.cli", *case.args],
                          input=case.stdin, capture_output=True, cwd=cwd, timeout=600,
                          env={**env, "PYTHONPATH": str(tree)})
    found = {line.rsplit("|", 1)[-1].strip().split(".")[0]
             for line in done.stderr.decode(errors="replace").splitlines()
             if line.startswith("import time:")}
    return sorted(found & set(HEAVY))


def cases(tmp: Path, demo: Path) -> list[Case]:
    """The commands the suite and the hooks start most (docs/testing.md, stop 26)."""
    projects = small_transcripts(tmp / "claude")
    new_db, brain_db, kept_db = tmp / "new.duckdb", tmp / "brain.duckdb", tmp / "kept.duckdb"
    transcript = projects / "p" / f"{SESSION}.jsonl"
    hook = json.dumps({"session_id": SESSION, "transcript_path": str(transcript),
                       "cwd": "/home/u", "hook_event_name": "Stop",
                       "stop_hook_active": False}).encode()
    hook_db = tmp / "hook.duckdb"
    lake = tmp / "lake"
    return [
        Case("ingest claude (20 lines, new store)",
             ["ingest", "claude", str(projects), "--db", str(new_db)], [new_db]),
        Case("ingest claude (nothing new)", ["ingest", "claude", str(projects), "--db",
                                             str(kept_db)]),
        Case("hook ingest --foreground (new store)",
             ["hook", "ingest", "--foreground", "--db", str(hook_db)], [hook_db], hook),
        Case("ingest brain (template brain, new store)",
             ["ingest", "brain", str(TEMPLATE_BRAIN), "--db", str(brain_db)], [brain_db]),
        Case("sql", ["sql", "SELECT count(*) FROM cc_requests", "--db", str(demo)]),
        Case("usage daily", ["usage", "daily", "--db", str(demo)]),
        Case("check (template brain)", ["check", str(TEMPLATE_BRAIN)]),
        Case("lab --print-command", ["lab", "--print-command", "--db", str(demo)]),
        Case("export (small store)", ["export", "--db", str(kept_db), "--lake", str(lake)],
             [lake]),
        Case("tune sessions", ["tune", "sessions", "--db", str(demo), "--budget", "10"]),
    ]


def demo_store(demo: Path, python: str, tmp: Path, cwd: Path, env: dict) -> Path:
    """``demo`` when it exists, else a demo store built under ``tmp`` by this checkout (its
    notebooks/ render the demo's report: a `checkout` tree holds only the package)."""
    if demo.exists():
        return demo
    demo = tmp / "demo" / "brainlab.duckdb"
    subprocess.run([python, "-m", "brainlab.cli", "demo", "--dir", str(demo.parent)],
                   check=True, capture_output=True, cwd=cwd, env={**env, "PYTHONPATH": str(REPO)})
    return demo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main", help="git revision to compare with")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--only", default="", help="only the cases whose name contains this")
    parser.add_argument("--demo", type=Path, default=REPO / "data" / "demo" / "brainlab.duckdb")
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="bench-cli-cpu-") as name:
        tmp = Path(name)
        cwd = tmp / "cwd"
        cwd.mkdir()
        env = isolated_env(tmp)
        trees = {"before": checkout(args.before, tmp / "before"), "now": REPO}
        demo = demo_store(args.demo, python, tmp, cwd, env)
        every = cases(tmp, demo)
        todo = [case for case in every if args.only in case.name]
        kept = next(case for case in every if "nothing new" in case.name)
        run(python, REPO, kept, cwd, env)  # the store the "nothing new" and export cases read
        for case in todo:  # warm-up: bytecode written, the template built for each side
            for tree in trees.values():
                run(python, tree, case, cwd, env)
        for _ in range(args.repeat):
            for case in todo:
                for side, tree in trees.items():
                    cpu, output = run(python, tree, case, cwd, env)
                    case.runs.setdefault(side, []).append(cpu)
                    for path in (trees["before"], REPO, tmp):
                        output = output.replace(str(path).encode(), b"TREE")
                    case.outputs.setdefault(side, set()).add(output)
        print(f"CPU-s per command, median (min-max) of {args.repeat} interleaved runs;"
              f" before = {args.before}, load average {os.getloadavg()[0]:.1f}")
        figures = {}
        for case in todo:
            before, now = (statistics.median(case.runs[s]) for s in ("before", "now"))
            same = case.outputs["before"] == case.outputs["now"]
            heavy = {side: heavy_imports(python, tree, case, cwd, env)
                     for side, tree in trees.items()}
            print(f"  {case.name:<42} before {span(case.runs['before'])}  now"
                  f" {span(case.runs['now'])}  {now - before:+.3f} ({(now / before - 1):+.0%})"
                  f"  output {'same' if same else 'DIFFERS'}")
            print(f"  {'':<42} heavy imports before: {', '.join(heavy['before']) or 'none'};"
                  f" now: {', '.join(heavy['now']) or 'none'}")
            figures[case.name] = {"before": before, "now": now, "same_output": same}
        emit("cli_cpu", before=args.before, repeat=args.repeat, commands=figures)


if __name__ == "__main__":
    main()
