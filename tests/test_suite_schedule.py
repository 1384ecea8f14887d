"""The suite's own scheduling and timeline (issue 28 item 1: `make test` under 10 minutes).

The longest work starts first (groups by their measured seconds, then the slowest ungrouped
files), xdist keeps that order, and ``BRAINLAB_TEST_TIMELINE`` records each test once with
its worker and group, which ``tests/timeline.py`` turns into the per-worker timeline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GROUP_SECONDS, SLOW_FILES, built_once
from timeline import compare, summary

TESTS = Path(__file__).resolve().parent
# hypothesis's pytest plugin imports hypothesis in every pytest process (~0.8 CPU-s), and
# these nested runs use none of it (issue 28 item 1)
NO_HYPOTHESIS = ("-p", "no:hypothesispytest")
ORDER_PLUGIN = '''
import pytest

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    from timeline import group_of
    print("REORDER", getattr(config.option, "loadscopereorder", None))
    for item in items:
        print("ITEM", group_of(item), item.nodeid)
'''


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> tuple[str, list[tuple[str, str]]]:
    """(xdist's reorder option, [(group, node id)] in the order work is handed out) for the
    files holding every group, a slow ungrouped file and a short one (collected last here)."""
    from conftest import KERNEL_GROUPS

    grouped = {p.name for p in TESTS.glob("test_*.py")
               if "xdist_group(" in p.read_text(encoding="utf-8")} | set(KERNEL_GROUPS)
    files = [f"tests/{name}" for name in sorted(grouped - {"test_suite_schedule.py"})]
    files = ["tests/test_config.py", "tests/test_usage_rollup.py", *files]

    def build(folder: Path) -> None:  # once a run for both xdist workers (~3.5 CPU-s)
        (folder / "collected.json").write_text(json.dumps(_collect(folder, files)))

    reorder, items = json.loads((built_once(tmp_path_factory, "suite-schedule-collected", build)
                                 / "collected.json").read_text())
    return reorder, [tuple(item) for item in items]


def _collect(folder: Path, files: list[str]) -> tuple[str, list[tuple[str, str]]]:
    """What :func:`collected` returns, from a nested ``pytest --collect-only`` in ``folder``."""
    (folder / "order_plugin.py").write_text(ORDER_PLUGIN, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(folder), str(TESTS.parent), os.environ.get("PYTHONPATH", "")])}
    env["BRAINLAB_TEST_TIMELINE"] = str(folder / "timeline.jsonl")  # a run of no test writes
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", *NO_HYPOTHESIS, "-p", "order_plugin", *files],
                          cwd=TESTS.parent, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (folder / "timeline.jsonl").exists()  # no probe, no test line (nothing ran)
    reorder = next(line.split()[1] for line in done.stdout.splitlines()
                   if line.startswith("REORDER"))
    items = [tuple(line.split()[1:3]) for line in done.stdout.splitlines()
             if line.startswith("ITEM")]
    return reorder, items


def test_longest_groups_start_first_and_xdist_keeps_the_order(collected):
    reorder, items = collected
    assert reorder == "False"  # before: xdist re-sorted the groups by their number of tests
    groups = [group for group, _ in items]
    first = [g for g in dict.fromkeys(groups) if g != "-"]
    assert first[0] == "spark"  # before: "notebooks" (51 short tests), Spark 415 s later
    assert first == sorted(first, key=lambda g: -GROUP_SECONDS[g])
    rollup = [i for i, (_, node) in enumerate(items) if "test_usage_rollup.py" in node]
    config = [i for i, (_, node) in enumerate(items) if "test_config.py" in node]
    assert max(i for i, g in enumerate(groups) if g != "-") < min(rollup)
    assert max(rollup) < min(config)  # a slow file before the short tests that fill the end
    # the Spark tests of a `spark ingest-claude` subprocess (JVMs of their own) are not held
    # in the serial group: their run is the cluster test's now (issue 28 item 1: before, a
    # group "own_jvm_1_spark" and a local[2] run of its own), beside the "spark" group
    cli = sorted(node.split("::")[-1] for group, node in items if group == "spark_cluster")
    assert cli == ["test_a_bad_user_folder_is_refused_and_the_rest_loads",
                   "test_a_standalone_cluster_writes_the_lake_a_local_store_holds",
                   "test_cli_spark_ingest_counts_warnings_apart_and_no_pandas_warning"]
    assert not [group for group in groups if group.startswith("own_jvm")]


def test_every_group_of_the_suite_has_its_place(collected):
    # a group missing from GROUP_SECONDS would start after every listed one, however long
    _, items = collected
    groups = {group for group, _ in items} - {"-"}
    assert groups <= set(GROUP_SECONDS), groups - set(GROUP_SECONDS)
    assert all((TESTS / name).is_file() for name in SLOW_FILES)


def test_a_parallel_run_records_each_test_once_with_worker_and_group(tmp_path):
    """A nested run of 14 quick ungrouped tests (test_regulator_rules.py: no store, no CLI;
    test_config.py's were 2.7 CPU-s, none of it what this test checks)."""
    timeline = tmp_path / "timeline.jsonl"
    env = {**os.environ, "BRAINLAB_TEST_TIMELINE": str(timeline)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup",
                           "-q", "-p", "no:cacheprovider", *NO_HYPOTHESIS,
                           "tests/test_regulator_rules.py"],
                          cwd=TESTS.parent, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    passed = int(done.stdout.split(" passed")[0].split()[-1])
    lines = [json.loads(line) for line in timeline.read_text().splitlines()]
    probes = [line for line in lines if "probe" in line]
    records = [line for line in lines if "probe" not in line]
    assert len(records) == passed  # once each: the controller writes only the probes
    # the machine probe, once before the first test and once after the last
    assert [p["probe"] for p in probes] == ["start", "end"]
    assert probes[0]["at"] <= min(r["start"] for r in records)
    assert probes[1]["at"] >= max(r["stop"] for r in records)
    assert all(p[work] > 0 for p in probes for work in ("duckdb", "python", "memory"))
    assert {r["worker"] for r in records} <= {"gw0", "gw1"}
    assert all(r["stop"] >= r["start"] and r["cpu"] >= 0 and r["group"] == "-"
               for r in records)
    report = subprocess.run([sys.executable, str(TESTS / "timeline.py"), str(timeline)],
                            capture_output=True, text=True, timeout=60)
    assert report.returncode == 0 and "idle:" in report.stdout, report.stderr
    assert report.stdout.startswith("machine probe at start"), report.stdout


def test_summary_shows_when_each_worker_ran_dry():
    records = [
        {"test": "a", "worker": "gw0", "group": "spark", "start": 0, "stop": 50, "cpu": 40},
        {"test": "b", "worker": "gw0", "group": "spark", "start": 50, "stop": 100, "cpu": 45},
        {"test": "c", "worker": "gw1", "group": "-", "start": 0, "stop": 30, "cpu": 29},
    ]
    lines = summary(records)
    assert lines[0].startswith("run: 100 s wall")
    assert "gw1: 1 tests, busy 30 s, idle after 30 s" in lines
    assert any(line.split() == ["spark", "0", "..", "100", "s", "100", "s", "in", "2", "tests"]
               for line in lines)
    assert lines[-1] == "idle: 70 worker-s of 200 (35%) after workers ran dry"
    assert summary([]) == ["no tests recorded"]
    probed = summary([{"probe": "start", "at": 0, "duckdb": 0.375, "python": 0.2,
                       "memory": 1.5}, *records])
    assert probed[0].split()[:10] == ["machine", "probe", "at", "start", "duckdb", "0.38",
                                      "python", "0.20", "memory", "1.50"]
    assert probed[2:] == lines  # the probe is not a test: the rest is unchanged


def test_compare_separates_the_machines_drift_from_one_files_change():
    """Five files 20% slower (the machine), one twice as slow (its own change): the drift is
    the median file's x1.20 and the doubled file comes first, 8 CPU-s over the drift."""
    def run(factor: dict[str, float]) -> list[dict]:
        return [{"probe": "start", "duckdb": 1.0},  # not a test: left out
                *({"test": f"tests/{f}.py::t{n}", "cpu_self": 5.0 * factor.get(f, 1.0)}
                  for f in ("a", "b", "c", "d", "e", "f") for n in range(2)),
                {"test": "tests/tiny.py::t", "cpu_self": 0.1 * factor.get("tiny", 1.0)}]

    reference = run({})
    now = run({**dict.fromkeys("abcde", 1.2), "f": 2.0, "tiny": 30.0})
    lines = compare(now, reference)
    assert lines[0].startswith("6 test files of at least 1 CPU-s in both runs: 80 against 60")
    assert lines[1].startswith("the machine's drift (median file): x1.20;")
    assert lines[3].split() == ["+8.0", "10.0", "->", "20.0", "tests/f.py"]
    assert "tiny" not in "\n".join(lines)  # under the floor: its noise is not a finding
    assert compare(now[:5], reference[:5])[0].endswith("too few to compare")


def test_make_compiles_the_package_before_the_tests_and_the_demo():
    """An editable install writes no bytecode and PYTHONDONTWRITEBYTECODE machines never write
    it: without ``make bytecode`` every command, kernel and worker compiled brainlab's modules
    on each start (benchmarks/bench_bytecode.py; docs/testing.md, stop 28). ``make -n``
    prints what each target would run, in order, without running it."""
    root = TESTS.parent
    for target, then in (("test", "-m pytest"), ("demo", "brainlab demo")):
        lines = subprocess.run(["make", "-n", target], cwd=root, capture_output=True, text=True,
                               check=True).stdout.splitlines()
        compiled = [i for i, line in enumerate(lines) if "-m compileall" in line
                    and "brainlab" in line.split("compileall", 1)[1].split()]
        runs = [i for i, line in enumerate(lines) if then in line]
        assert compiled and runs and compiled[0] < runs[0], (target, lines)
