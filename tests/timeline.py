"""Where a parallel test run's wall time goes: per-worker timeline and per-group totals.

With ``BRAINLAB_TEST_TIMELINE=FILE`` set, every test process (the xdist workers, or the one
process without -n) appends one JSON line per test to FILE: worker, xdist group, start and
stop (wall seconds since the epoch), and the setup/call/teardown durations. Then::

    python tests/timeline.py FILE

prints, for each worker, when it started and went idle and which groups it ran (first
start, last stop, summed test seconds), then the groups by total seconds, and the idle
fraction of the workers (the time between a worker's last test and the end of the run).
Off by default: nothing is written unless the variable is set. docs/testing.md shows it.

The run's first and last lines are the machine probe (:func:`probe`): the CPU seconds of the
same fixed work before the first test and after the last (``python tests/timeline.py
--probe`` prints it alone). It reads the machine quiet and can miss a drift that shows only
under the suite's load (stop 29: +14% between two runs, the probes alike), so two runs
compare by test file: ``python tests/timeline.py RUN --against REFERENCE`` (:func:`compare`).
"""

from __future__ import annotations

import json
import mmap
import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

ENV = "BRAINLAB_TEST_TIMELINE"
PROBE_ROWS = 50_000_000  # ~0.3-0.4 CPU-s of DuckDB on this machine at its fastest
PROBE_LOOP = 5_000_000  # ~0.25 CPU-s of interpreted Python
PROBE_BYTES = 512 << 20  # fresh pages: on this VM a new page costs the host a fault too


def group_of(item) -> str:
    """The xdist group a test runs in, named as xdist names it (its group marks, sorted, joined
    by "_"); "-" when it has none (any worker takes it)."""
    names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                    for m in item.iter_markers("xdist_group")})
    return "_".join(names) or "-"


class Recorder:
    """A pytest plugin appending one line per finished test to the timeline file."""

    def __init__(self, path: str):
        self.path = path
        self.worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.current: dict = {}

    def pytest_runtest_logstart(self, nodeid, location):
        self.current = {"test": nodeid, "worker": self.worker, "start": time.time(),
                        "cpu0": _cpu(), "self0": _cpu_self(), "setup": 0.0, "call": 0.0, "teardown": 0.0}

    def pytest_runtest_makereport(self, item, call):
        if self.current.get("test") == item.nodeid:
            self.current["group"] = group_of(item)
            self.current[call.when] = round(call.duration, 3)

    def pytest_runtest_logfinish(self, nodeid, location):
        record = dict(self.current, stop=time.time())
        record["cpu"] = round(_cpu() - record.pop("cpu0", 0.0), 3)
        record["cpu_self"] = round(_cpu_self() - record.pop("self0", 0.0), 3)
        with open(self.path, "a", encoding="utf-8") as out:  # one short line: atomic append
            out.write(json.dumps(record) + "\n")


def _cpu() -> float:
    """CPU seconds of this process and of its children waited for (a JVM kept alive by a
    session fixture counts only when it ends)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return _cpu_self() + children.ru_utime + children.ru_stime


def _cpu_self() -> float:
    """CPU seconds of this process alone (the test's in-process work, its children apart)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def probe() -> dict[str, float]:
    """CPU seconds of three fixed single-thread works: a DuckDB scan (the suite's stores), a
    Python loop (its interpreters) and touching fresh memory (its process starts). The work
    never changes, so a change in these seconds is the machine's, not the code's."""
    import duckdb

    seconds = {}
    con = duckdb.connect()
    con.execute("SET threads = 1")
    start = time.process_time()
    con.execute(f"SELECT sum(hash(i) % 7) FROM range({PROBE_ROWS}) t(i)").fetchall()
    seconds["duckdb"] = time.process_time() - start
    con.close()
    start = time.process_time()
    sum(i * i for i in range(PROBE_LOOP))
    seconds["python"] = time.process_time() - start
    start = time.process_time()
    with mmap.mmap(-1, PROBE_BYTES) as fresh:
        for offset in range(0, PROBE_BYTES, mmap.PAGESIZE):
            fresh[offset] = 1
    seconds["memory"] = time.process_time() - start
    return {name: round(value, 3) for name, value in seconds.items()}


class Probe:
    """A pytest plugin writing the machine probe before the first test and after the last."""

    def __init__(self, path: str):
        self.path = path

    def _write(self, when: str) -> None:
        record = {"probe": when, "at": time.time(), **probe()}
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")

    def pytest_sessionstart(self, session):
        self._write("start")

    def pytest_sessionfinish(self, session, exitstatus):
        self._write("end")


def register(config) -> None:
    """Record this process's tests when ``BRAINLAB_TEST_TIMELINE`` names a file; the process
    that runs the session (the xdist controller, or the only one) probes the machine."""
    path = os.environ.get(ENV)
    if not path or config.getoption("collectonly", False):  # no test runs: nothing to time
        return
    worker = hasattr(config, "workerinput")
    if not worker:
        config.pluginmanager.register(Probe(path), "brainlab-probe")
    if worker or not config.getoption("numprocesses", None):  # the controller only relays
        config.pluginmanager.register(Recorder(path), "brainlab-timeline")


def summary(records: list[dict], top: int = 15) -> list[str]:
    """The report lines: the machine probe, workers, then groups, then idle time."""
    probes = [r for r in records if "probe" in r]
    records = [r for r in records if "probe" not in r]
    if not records:
        return ["no tests recorded"]
    lines = [probe_line(r) for r in probes]
    if lines:
        lines.append("")
    begin = min(r["start"] for r in records)
    end = max(r["stop"] for r in records)
    lines += [f"run: {end - begin:.0f} s wall from first test start to last test stop", ""]
    by_worker: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_worker[record["worker"]].append(record)
    idle = 0.0
    for worker in sorted(by_worker):
        rows = sorted(by_worker[worker], key=lambda r: r["start"])
        last = max(r["stop"] for r in rows) - begin
        idle += (end - begin) - last
        busy = sum(r["stop"] - r["start"] for r in rows)
        lines.append(f"{worker}: {len(rows)} tests, busy {busy:.0f} s, idle after {last:.0f} s")
        groups: dict[str, list[float]] = {}
        for r in rows:
            span = groups.setdefault(r.get("group", "-"), [r["start"], r["stop"], 0.0, 0])
            span[0], span[1] = min(span[0], r["start"]), max(span[1], r["stop"])
            span[2] += r["stop"] - r["start"]
            span[3] += 1
        for name, (first, stop, total, count) in sorted(groups.items(), key=lambda g: g[1][0]):
            lines.append(f"  {name:<16} {first - begin:6.0f} .. {stop - begin:6.0f} s"
                         f"  {total:6.0f} s in {count} tests")
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for record in records:
        totals[record.get("group", "-")][0] += record["stop"] - record["start"]
        totals[record.get("group", "-")][1] += record.get("cpu", 0.0)
    lines += ["", "groups by total test seconds (wall, CPU of the worker and its children):"]
    lines += [f"  {name:<16} {wall:6.0f} s  {cpu:6.0f} CPU-s" for name, (wall, cpu) in
              sorted(totals.items(), key=lambda g: -g[1][0])]
    slow = sorted(records, key=lambda r: r["start"] - r["stop"])[:top]
    lines += ["", f"slowest {len(slow)} tests (wall s, start s, worker):"]
    lines += [f"  {r['stop'] - r['start']:6.1f} {r['start'] - begin:6.0f} {r['worker']}"
              f"  {r['test']}" for r in slow]
    workers = len(by_worker)
    lines += ["", f"idle: {idle:.0f} worker-s of {workers * (end - begin):.0f}"
                  f" ({100 * idle / (workers * (end - begin)):.0f}%) after workers ran dry"]
    return lines


def compare(records: list[dict], reference: list[dict], floor: float = 1.0,
            top: int = 5) -> list[str]:
    """This run's in-process CPU (``cpu_self``) by test file against a reference run's.

    The probe reads a quiet machine; the suite's own seconds drifted by 14% between two
    back-to-back runs whose probes read the same (stop 29). A drift of the machine moves every
    file alike, so the median file's ratio is the drift, the quartiles the files' own noise,
    and the files furthest (in CPU-s) from the drift's expectation are where a change of the
    code would show. Files under ``floor`` CPU-s in the reference are left out.
    """
    import statistics

    def by_file(rows: list[dict]) -> dict[str, float]:
        totals: dict[str, float] = defaultdict(float)
        for row in rows:
            if "probe" not in row:
                totals[row["test"].split("::")[0]] += row.get("cpu_self", 0.0)
        return totals

    now, before = by_file(records), by_file(reference)
    files = sorted(f for f in now.keys() & before.keys() if before[f] >= floor)
    if len(files) < 4:
        return [f"{len(files)} test files of at least {floor:g} CPU-s in both runs: too few"
                " to compare"]
    low, median, high = statistics.quantiles([now[f] / before[f] for f in files], n=4)
    lines = [f"{len(files)} test files of at least {floor:g} CPU-s in both runs:"
             f" {sum(now[f] for f in files):.0f} against {sum(before[f] for f in files):.0f}"
             f" CPU-s in-process",
             f"the machine's drift (median file): x{median:.2f}; the files' noise (quartiles):"
             f" x{low:.2f} to x{high:.2f}",
             "furthest from the drift (CPU-s over the drift's expectation):"]
    gap = {f: now[f] - before[f] * median for f in files}
    lines += [f"  {gap[f]:+6.1f}  {before[f]:6.1f} -> {now[f]:6.1f}  {f}"
              for f in sorted(files, key=lambda f: -abs(gap[f]))[:top]]
    return lines


def probe_line(record: dict) -> str:
    """One probe as a line: when, then each work's CPU seconds (more seconds: slower)."""
    works = "  ".join(f"{name} {record[name]:.2f}" for name in ("duckdb", "python", "memory"))
    return f"machine probe at {record['probe']:<5}  {works}  CPU-s (the same work every run)"


def read(path: str) -> list[dict]:
    """The records of a timeline file."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip()]


def main(argv: list[str]) -> int:
    if argv == ["--probe"]:
        print(probe_line({"probe": "now", **probe()}))
        return 0
    if len(argv) == 3 and argv[1] == "--against":
        print("\n".join(compare(read(argv[0]), read(argv[2]))))
        return 0
    if len(argv) != 1:
        print("usage: python tests/timeline.py TIMELINE_FILE [--against REFERENCE_FILE]"
              " | --probe", file=sys.stderr)
        return 2
    print("\n".join(summary(read(argv[0]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
