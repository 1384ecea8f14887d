"""Benchmark: where a weekly report's time goes, in CPU seconds and wall seconds.

On a store (``--db``, e.g. the public transcripts corpus ingested) or on a synthetic brain it
builds (``--weeks N``), in one run:

- one week by ``render_weekly`` (papermill, a kernel of its own): wall and CPU-s of the whole
  process tree (this process + the kernel it starts, from ``getrusage``: the kernel is reaped
  before the figure is read);
- ``--many`` weeks (``--all``: every week holding a session) by ``render_weeks`` (one kernel
  for all of them): total and per week, wall and CPU-s;
- the baseline in the same run: the same weeks with the materialized views off
  (``--baseline materialize``, the default: ``BRAINLAB_REPORT_MATERIALIZE=0``, the code of
  the cut before) or with every per-render cache off (``--baseline cache``:
  ``BRAINLAB_REPORT_CACHE=0``, every query opens its own connection, as before issue 28
  item 8), or none (``--no-baseline``); ``--baseline REV`` (a git revision): this script
  run twice in fresh interpreters with ``--no-baseline``, one importing brainlab of ``REV``
  (``benchkit.checkout``; its kernels too) and one this tree's, both outputs printed and
  their figures side by side;
- CPU-s split between this process (the parent: papermill, nbconvert, files) and the
  kernels it started;
- a breakdown of one week in this process: the imports, each section's CPU-s and wall (the
  same functions the notebook's cells call), then nbconvert's HTML and the summary; with
  ``--trace``, inside the sections: each SQL statement (execute + fetch) and each chart's
  SVG conversion (vl-convert), the slowest first;
- each notebook cell's wall time in the first and a later week (nbclient's timestamps).

CPU-s is the honest figure on a shared machine (wall grows with the load average, printed
beside every figure). Run:

    PYTHONPATH=. python benchmarks/bench_report.py --db corpus.duckdb --all
    PYTHONPATH=. python benchmarks/bench_report.py --weeks 6 --many 3
    PYTHONPATH=. python benchmarks/bench_report.py --db data/demo/brainlab.duckdb --trace
    PYTHONPATH=. python benchmarks/bench_report.py --db data/demo/brainlab.duckdb --baseline main
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat
from benchkit import MARKER, REPO, checkout, emit

SECTIONS = ("title", "headline", "health", "ratio", "conserve", "agents", "breath",
            "regulator", "usage", "people", "telemetry", "limits", "logged_vs_measured", "hygiene",
            "compliance", "data_quality", "sessions")


def own_cpu() -> float:
    """CPU seconds of this process, user + sys (DuckDB's threads included)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def kids_cpu() -> float:
    """CPU seconds of this process's reaped children (the kernels), user + sys."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def cpu() -> float:
    """CPU seconds of this process and of its reaped children (the kernels), user + sys."""
    return own_cpu() + kids_cpu()


@contextlib.contextmanager
def clock(into: dict, key: str):
    """Record wall and CPU-s of the block into ``into[key] = (wall, cpu)`` (and the parent's
    and kernels' shares into ``into[key + ':split']``)."""
    wall, own, kids = time.perf_counter(), own_cpu(), kids_cpu()
    yield
    parent, kernels = own_cpu() - own, kids_cpu() - kids
    into[key] = (time.perf_counter() - wall, parent + kernels)
    into[key + ":split"] = [round(parent, 2), round(kernels, 2)]


SWITCHES = {"new": {}, "baseline": {}}  # mode -> environment (set in main from --baseline)


@contextlib.contextmanager
def caches(mode: str):
    """Run the block with the environment of ``mode`` (new: every cut on; baseline: one off)."""
    names = ("BRAINLAB_REPORT_CACHE", "BRAINLAB_REPORT_MATERIALIZE")
    old = {name: os.environ.get(name) for name in names}
    for name in names:
        os.environ.pop(name, None)
    os.environ.update(SWITCHES[mode])
    try:
        yield
    finally:
        for name, value in old.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class Trace:
    """Times every SQL statement of a held connection and every vl-convert call (``--trace``).

    Patches ``HeldReader.connection`` (a proxy times ``execute`` and the fetch after it) and
    ``vl_convert.vegalite_to_svg``, in this process only; :meth:`restore` undoes it.
    """

    def __init__(self) -> None:
        import vl_convert

        from brainlab.store import connection

        self.records: list[tuple[str, str, str, float, float, int]] = []
        self.section = "?"
        self._held = connection.HeldReader.connection
        self._svg = vl_convert.vegalite_to_svg
        trace = self

        class Result:
            def __init__(self, result, sql):
                self._result, self._sql = result, sql

            def __getattr__(self, name):
                found = getattr(self._result, name)
                if not callable(found):
                    return found

                def timed_fetch(*args, **kwargs):
                    with trace.timed("sql", self._sql, call=False):
                        return found(*args, **kwargs)
                return timed_fetch

        class Connection:
            def __init__(self, con):
                self._con = con

            def execute(self, sql, params=None):
                with trace.timed("sql", sql):
                    return Result(self._con.execute(sql, params or []), sql)

            def __getattr__(self, name):
                return getattr(self._con, name)

        def held(reader):
            opening = getattr(reader, "_con", None) is None
            with trace.timed("open", "open + materialize") if opening else contextlib.nullcontext():
                con = trace._held(reader)
            return Connection(con)

        def svg(spec, *args, **kwargs):
            rows = sum(len(v) for v in spec.get("datasets", {}).values())
            title = spec.get("title")
            title = title.get("text") if isinstance(title, dict) else title or "warm-up"
            with trace.timed("chart", f"{title} ({rows} rows)"):
                return trace._svg(spec, *args, **kwargs)

        connection.HeldReader.connection = held
        vl_convert.vegalite_to_svg = svg

    @contextlib.contextmanager
    def timed(self, kind: str, what: str, call: bool = True):
        """Time the block under ``kind``/``what``; ``call=False``: the fetch of a statement."""
        wall, used = time.perf_counter(), own_cpu()
        try:
            yield
        finally:
            self.records.append((self.section, kind, " ".join(str(what).split()),
                                 time.perf_counter() - wall, own_cpu() - used, int(call)))

    def restore(self) -> None:
        import vl_convert

        from brainlab.store import connection

        connection.HeldReader.connection = self._held
        vl_convert.vegalite_to_svg = self._svg

    def report(self, top: int = 12) -> None:
        """Totals per kind, the slowest statements (one line each), every chart."""
        merged: dict[tuple, list] = {}
        for section, kind, what, wall, used, call in self.records:
            entry = merged.setdefault((section, kind, what), [0.0, 0.0, 0])
            entry[0] += wall
            entry[1] += used
            entry[2] += call
        for kind in ("open", "sql", "chart"):
            rows = [(k, v) for k, v in merged.items() if k[1] == kind]
            calls = sum(v[2] for _k, v in rows)
            print(f"  {kind:6s} {calls:4d} call(s) {sum(v[0] for _k, v in rows):7.2f} s wall"
                  f" {sum(v[1] for _k, v in rows):6.2f} CPU-s")
            shown = sorted(rows, key=lambda kv: -kv[1][1])[:top if kind == "sql" else None]
            for (section, _kind, what), (wall, used, n) in shown:
                print(f"   {wall:5.2f} {used:5.2f} {n:2d}x {section[:10]:10s} {what[:48]}")


def build(root: Path, weeks: int) -> Path:
    from brainlab.demo import build_store

    db = root / "brainlab.duckdb"
    build_store(root / "brain", db, weeks=weeks, seed=7, transcripts=False)
    return db


def cell_times(notebook: Path) -> list[tuple[float, str]]:
    """(seconds, first line) of each code cell, from nbclient's execution timestamps."""
    nb = nbformat.read(str(notebook), as_version=4)
    out = []
    for cell in nb.cells:
        timing = cell.metadata.get("execution", {})
        begin, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if cell.cell_type != "code" or not begin or not end:
            continue
        seconds = (datetime.fromisoformat(end.replace("Z", "+00:00"))
                   - datetime.fromisoformat(begin.replace("Z", "+00:00"))).total_seconds()
        first = next((ln for ln in cell.source.splitlines() if ln.strip()
                      and not ln.startswith("#")), "")
        out.append((seconds, first.strip()[:52]))
    return out


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def breakdown(db: Path, week: str, mode: str, trace: Trace | None = None) -> dict:
    """One week's sections called in this process: (wall, CPU-s) per section."""
    from brainlab.report import sections
    from brainlab.report.people import people

    found: dict = {}
    # the charts converted here, so that each section's CPU-s and --trace count them (the
    # chart process would convert them in a process of its own)
    os.environ[sections.CHART_PROCESS_ENV] = "0"
    with caches(mode), contextlib.redirect_stdout(io.StringIO()):
        for name in ("open_report", *SECTIONS, "finish"):
            if trace:
                trace.section = name
            with clock(found, name):
                if name == "open_report":
                    ctx = sections.open_report(db=str(db), week=week, run_id="bench")
                elif name == "people":
                    people(ctx)
                else:
                    getattr(sections, name)(ctx)
    return {k: v for k, v in found.items() if not k.endswith(":split")}


def rendered(out: Path, week: str) -> Path:
    return out / week / "weekly_health.ipynb"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, help="an existing store (default: build a demo)")
    parser.add_argument("--weeks", type=int, default=6, help="weeks of the demo brain")
    parser.add_argument("--many", type=int, default=3, help="weeks rendered in one kernel")
    parser.add_argument("--all", action="store_true", help="every week holding a session")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--baseline", default="materialize",
                        help="what the baseline turns off: materialize (the materialized views,"
                             " default) or cache; anything else is a git revision timed beside"
                             " this tree")
    parser.add_argument("--trace", action="store_true",
                        help="time each SQL statement and chart of the breakdown's sections")
    args = parser.parse_args()
    if args.baseline not in ("materialize", "cache") and not args.no_baseline:
        revisions(args)
        return
    SWITCHES["baseline"] = ({"BRAINLAB_REPORT_MATERIALIZE": "0"} if args.baseline ==
                            "materialize" else {"BRAINLAB_REPORT_CACHE": "0"})
    print(f"start ({load()})", flush=True)
    imports: dict = {}
    with clock(imports, "imports"):  # what the notebook's first cell pays in a new kernel
        from brainlab.report import sections  # noqa: F401
    with clock(imports, "runner"):  # what the command adds (papermill, nbformat, nbconvert)
        import nbconvert  # noqa: F401  (paid once by the command; out of the first render's figure)
        import papermill  # noqa: F401

        from brainlab.report import render_weekly, render_weeks, select_weeks
    from brainlab.report import html

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.db:
            db = args.db.resolve()
        else:
            started = time.perf_counter()
            db = build(root, args.weeks)
            print(f"synthesize + ingest {args.weeks} weeks: {time.perf_counter() - started:.1f} s")
        held = select_weeks(db, all_weeks=True)
        weeks = held if args.all else held[-args.many:]
        print(f"store {db.name}: {len(held)} week(s) with sessions; rendering {len(weeks)}:"
              f" {weeks[0]}..{weeks[-1]}", flush=True)
        figures: dict = {}
        modes = ["new"] + ([] if args.no_baseline else ["baseline"])
        if not args.no_baseline:
            print(f"baseline: {SWITCHES['baseline']}")
        for label in modes:
            with caches(label):
                with clock(figures, f"{label}_one"):
                    render_weekly(db, weeks[-1], root / label / "one", update_index=False)
                wall, used = figures[f"{label}_one"]
                parent, kernel = figures[f"{label}_one:split"]
                print(f"{label:8s} one week ({weeks[-1]}), own kernel: {wall:.2f} s wall,"
                      f" {used:.2f} CPU-s\n{'':9s}= parent {parent:.2f} + kernel {kernel:.2f}"
                      f" ({load()})", flush=True)
                with clock(figures, f"{label}_many"):
                    render_weeks(db, weeks, root / label / "many")
                wall, used = figures[f"{label}_many"]
                parent, kernel = figures[f"{label}_many:split"]
                print(f"{label:8s} {len(weeks)} weeks, one kernel: {wall:.2f} s wall,"
                      f" {used:.2f} CPU-s; per week {wall / len(weeks):.2f} s,\n{'':9s}"
                      f"{used / len(weeks):.2f} CPU-s = parent {parent / len(weeks):.2f} +"
                      f" kernel {kernel / len(weeks):.2f} ({load()})", flush=True)

        print(f"\nbreakdown of {weeks[-1]} here, wall s / CPU-s ({load()})")
        for key, what in (("imports", "imports cell (sections)"), ("runner", "runner imports")):
            print(f"  {what:34s} {imports[key][0]:6.2f} {imports[key][1]:6.2f}")
        for label in modes[:1]:  # a baseline here would reuse this process's warm caches
            trace = Trace() if args.trace else None
            try:
                found = breakdown(db, weeks[-1], label, trace)
            finally:
                if trace:
                    trace.restore()
            notebook = nbformat.read(str(rendered(root / "new" / "one", weeks[-1])), 4)
            with clock(found, "html (nbconvert)"):
                html.report_html(notebook, "x")
            found.pop("html (nbconvert):split")
            total = sum(c for _w, c in found.values())
            figures[f"{label}_breakdown_cpu"] = total
            print(f" {label}: sum {total:.2f} CPU-s")
            for key, (wall, used) in sorted(found.items(), key=lambda kv: -kv[1][1]):
                if used >= 0.02:
                    print(f"  {key:34s} {wall:6.2f} {used:6.2f}")
            if trace:
                print(f" {label}, inside the sections (wall s / CPU-s, the slowest first):")
                trace.report()
        for label, week in (("first week", weeks[0]), ("a later week", weeks[-1])):
            times = cell_times(rendered(root / "new" / "many", week))
            print(f"cells of the {label} ({week}), one kernel, wall: "
                  f"{sum(t for t, _ in times):.2f} s")
            for seconds, first in sorted(times, reverse=True)[:5]:
                print(f"  {seconds:6.2f} s  {first}")
    per = {k: [round(v[0], 2), round(v[1], 2)] for k, v in figures.items()
           if isinstance(v, tuple)}
    per.update({k: v for k, v in figures.items() if k.endswith(":split")})
    emit("report", store=db.name, weeks=len(weeks), wall_cpu=per,
         cpu_s_per_week_many=figures["new_many"][1] / len(weeks),
         cpu_s_one_week=figures["new_one"][1],
         baseline_cpu_s_per_week_many=(figures["baseline_many"][1] / len(weeks)
                                       if "baseline_many" in figures else None))
    sys.stdout.flush()


def revisions(args) -> None:
    """``--baseline REV``: this benchmark in fresh interpreters, REV's brainlab then this tree's."""
    import json
    import subprocess

    forwarded = [*(["--db", str(args.db.resolve())] if args.db else []), "--weeks",
                 str(args.weeks), "--many", str(args.many), *(["--all"] if args.all else []),
                 *(["--trace"] if args.trace else []), "--no-baseline"]
    found = {}
    with tempfile.TemporaryDirectory(prefix="bench-report-") as scratch:
        for side, tree in (("before", checkout(args.baseline, Path(scratch),
                                                          ("brainlab", "notebooks"))),
                           ("after", REPO)):
            env = {**os.environ, "PYTHONPATH": str(tree)}
            done = subprocess.run([sys.executable, __file__, *forwarded], env=env,
                                  capture_output=True, text=True, check=True)
            print(f"=== {side} ({args.baseline if side == 'before' else 'this tree'})\n"
                  f"{done.stdout.rstrip()}", flush=True)
            line = next(x for x in done.stdout.splitlines() if x.startswith(MARKER + " "))
            found[side] = json.loads(line[len(MARKER) + 1:])
    print(f"\nCPU-s, before ({args.baseline}) -> after (this tree):")
    for key, label in (("cpu_s_one_week", "one week, own kernel"),
                       ("cpu_s_per_week_many", "per week, one kernel")):
        a, b = found["before"][key], found["after"][key]
        print(f"  {label:22s} {a:6.2f} -> {b:6.2f}  ({b - a:+.2f})")
    emit("report_compare", baseline=args.baseline,
         **{f"{k}_{side}": found[side][k] for side in found
            for k in ("cpu_s_one_week", "cpu_s_per_week_many")})


if __name__ == "__main__":
    main()
