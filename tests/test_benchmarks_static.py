"""Benchmarks import brainlab as installed and print a machine-readable line (issue 23 item 7).

Read as text and run nothing timed: no test depends on wall-clock speed.
"""

import importlib.util
import json
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p for p in BENCHMARKS.glob("*.py") if p.name != "benchkit.py")


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_benchmark_prints_a_bench_line_and_leaves_sys_path_alone(script):
    text = script.read_text(encoding="utf-8")
    assert "sys.path" not in text, "benchmarks import brainlab as installed (or PYTHONPATH)"
    assert "emit(" in text and "from benchkit import" in text


def test_the_bench_line_is_one_json_object_with_the_load_average():
    spec = importlib.util.spec_from_file_location("benchkit", BENCHMARKS / "benchkit.py")
    benchkit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchkit)
    line = benchkit.summary_line("demo", seconds=1.23456789, rows=3, steps={"a": [1, 2]})
    marker, payload = line.split(" ", 1)
    record = json.loads(payload)
    assert marker == "BENCH" and "\n" not in line
    assert record["bench"] == "demo" and len(record["load_average"]) == 3
    assert record["seconds"] == 1.234568 and record["steps"] == {"a": [1, 2]}
