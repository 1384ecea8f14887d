"""The report's kernel started early (issue 28 item 8): it imports the sections while the
command works, papermill runs the notebook in it, and a kernel that cannot start leaves the
command to start one the usual way, or to say what failed in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from report_helpers import report_command

from brainlab.report import runner

pytestmark = pytest.mark.xdist_group("reports2")  # with test_cli_report.py: one worker, one render


def _probe(path: Path) -> Path:
    """A parameterized notebook printing what its kernel holds: pid, folder, modules, names."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('tag: str = ""  # anything')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(
        "import json, os, sys\n"
        "print(json.dumps({'pid': os.getpid(), 'cwd': os.getcwd(),\n"
        "                  'warm': 'brainlab.report.sections' in sys.modules,\n"
        "                  'names': sorted(n for n in dir() if 'warm' in n or n == 'sections')}))")]
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python",
                                 "display_name": "Python 3"}
    nbformat.write(nb, str(path))
    return path


def _printed(execution: runner.Execution) -> dict:
    out = next(o for o in execution.notebook.cells[-1].outputs if o.get("name") == "stdout")
    return json.loads(out["text"])


def test_the_early_kernel_runs_the_notebook_warm_and_is_closed_after(tmp_path):
    notebook, week_dir = _probe(tmp_path / "probe.ipynb"), tmp_path / "week"
    week_dir.mkdir()
    with runner.early_kernel() as kernel:
        assert kernel is not None
        pid = kernel.km.provisioner.process.pid
        run = runner.execute(notebook, tmp_path / "out.ipynb", {"tag": "x"}, "run",
                             cwd=week_dir, kernel=kernel)
        assert not kernel.km.has_kernel  # killed once the run ended
    printed = _printed(run)
    assert printed["pid"] == pid  # the kernel started early ran the notebook
    assert Path(printed["cwd"]) == week_dir.resolve()
    assert printed["warm"] is True  # imported before the first cell asked for it
    assert printed["names"] == []  # the warm-up left no name behind
    counts = [c.execution_count for c in run.notebook.cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1))  # the warm-up took no execution count


def test_switched_off_no_kernel_is_started_early(tmp_path, monkeypatch):
    monkeypatch.setenv(runner.EARLY_ENV, "0")
    with runner.early_kernel() as kernel:
        assert kernel is None
    run = runner.execute(_probe(tmp_path / "probe.ipynb"), tmp_path / "out.ipynb", {}, "run",
                         cwd=tmp_path)
    assert Path(_printed(run)["cwd"]) == tmp_path.resolve()


@pytest.fixture(scope="module")
def store(small_report_store):
    """The run's 3-week store (conftest.py; it was a 2-week one of this file's) and its last
    week: the commands read it and render into their own folders."""
    return small_report_store["db"], small_report_store["weeks"][-1]


@pytest.mark.slow
def test_the_command_starts_one_kernel_and_renders_in_it(small_week_command, store):
    # the run's one render of this week by the command (conftest.py), shared with
    # test_cli_report.py, which then fails a run over it
    done, starts = small_week_command["done"], small_week_command["starts"]
    assert done.returncode == 0, done.stderr
    assert len(starts) == 1  # the early kernel, not a second one for papermill
    page = small_week_command["out"] / store[1] / "weekly_health.html"
    assert f"brainlab weekly health — {store[1]}" in page.read_text()


@pytest.mark.slow
def test_an_early_kernel_that_dies_gives_way_to_papermills_own(small_empty_week_command):
    # the run's one render of an empty week (a week before the store's first) by the command
    # whose early kernel dies at once (conftest.py), shared with test_report.py's no-sessions
    # page test (issue 28 item 1: a full week's render here cost ~2.5 CPU-s more)
    done, starts = small_empty_week_command["done"], small_empty_week_command["starts"]
    week = small_empty_week_command["week"]
    assert done.returncode == 0, done.stderr
    assert len(starts) == 2  # the early one died; papermill started the one that rendered
    page = (small_empty_week_command["out"] / week / "weekly_health.html").read_text()
    assert f"brainlab weekly health — {week}" in page


def test_no_kernel_can_start_one_error_line(tmp_path, store):
    done, starts = report_command(tmp_path, store, fail_starts=99)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: report notebook failed"), lines
    assert "Traceback" not in done.stderr + done.stdout
    assert len(starts) == 2
    assert not (tmp_path / "reports" / store[1] / "weekly_health.html").exists()


def test_the_command_plans_its_weeks_without_pandas(store):
    # the DataFrame work is the kernel's: the command's own process stays light (issue 28
    # item 8: pandas was ~0.5 CPU-s of the command, on the core the kernel starts on)
    probe = ("import sys\nfrom brainlab.cli import main\n"
             "try:\n    main(sys.argv[1:])\nexcept SystemExit as exc:\n    code = exc.code\n"
             "print(code, 'pandas' in sys.modules)")
    db, _week = store
    done = subprocess.run([sys.executable, "-c", probe, "report", "weekly", "--week", "2030-W01",
                           "--db", str(db)], capture_output=True, text=True, timeout=300)
    assert done.stdout.split() == ["1", "False"], done.stdout + done.stderr
    assert "after the data" in done.stderr
