"""``brainlab report weekly``: renders a week, exits non-zero on a failed run and keeps the
previous report, and picks weeks for --week / --all / --since."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner

from brainlab.cli import main
from brainlab.common.errors import ReportError
from brainlab.report import plan_weeks, select_weeks
from brainlab.report.weekly import held_weeks


@pytest.fixture(scope="module")
def small(small_report_store):
    """3 weeks (seed 5), built once per run (conftest.py), read only: renders write elsewhere."""
    return small_report_store


def invoke(*args):
    return CliRunner().invoke(main, ["report", "weekly", *map(str, args)])


@pytest.mark.slow
def test_weekly_renders_then_failed_run_keeps_it(small, small_week_command, tmp_path):
    # the render: the run's one `brainlab report weekly --week LAST` of this store, the CLI in
    # a subprocess (conftest.py, shared with test_report_early_kernel.py); the failing run
    # goes over a copy of its output
    week = small["weeks"][-1]
    done, rendered = small_week_command["done"], small_week_command["out"]
    assert done.returncode == 0, done.stderr
    page = rendered / week / "weekly_health.html"
    assert str(page) in done.stdout and page.exists()
    assert f'href="{week}/weekly_health.html"' in (rendered / "index.html").read_text()
    out = tmp_path / "reports"
    shutil.copytree(rendered, out)
    page = out / week / "weekly_health.html"
    before = page.read_bytes()

    bad = tmp_path / "thresholds.toml"
    bad.write_text("[thresholds]\nno_such_threshold = 1\n")
    failed = invoke("--week", week, "--db", small["db"], "--out", out, "--thresholds", bad)
    assert failed.exit_code == 1
    assert "Error: report notebook failed in cell" in failed.output
    assert "ConfigError" in failed.output and "no_such_threshold" in failed.output
    assert page.read_bytes() == before
    assert (out / week / "weekly_health.failed.ipynb").exists()


def test_user_errors_exit_1(small, tmp_path):
    both = invoke("--week", small["weeks"][0], "--all", "--db", small["db"], "--out", tmp_path)
    assert both.exit_code == 1 and "one of --week, --all or --since" in both.output
    missing = invoke("--db", tmp_path / "none.duckdb", "--out", tmp_path)
    assert missing.exit_code == 1 and "no database" in missing.output
    bad_week = invoke("--week", "2026-48", "--db", small["db"], "--out", tmp_path)
    assert bad_week.exit_code == 1 and "ISO week" in bad_week.output
    assert not (tmp_path / "index.html").exists()


def test_week_selection(small):
    weeks = small["weeks"]
    assert select_weeks(small["db"]) == [weeks[-1]]
    assert select_weeks(small["db"], all_weeks=True) == weeks
    assert select_weeks(small["db"], since=weeks[1]) == weeks[1:]
    assert select_weeks(small["db"], week="2026-W01") == ["2026-W01"]
    with pytest.raises(ReportError):
        select_weeks(small["db"], week=weeks[0], since=weeks[0])


def test_a_week_after_the_data_is_refused_in_one_line(small, tmp_path):
    brainlab = Path(sys.executable).with_name("brainlab")
    done = subprocess.run([str(brainlab), "report", "weekly", "--week", "2030-W01", "--db",
                           str(small["db"]), "--out", str(tmp_path / "reports")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"Error: 2030-W01 is after the data (the newest session is in {small['weeks'][-1]}): "
        f"name a week up to {small['weeks'][-1]}"]
    assert not (tmp_path / "reports").exists()
    with pytest.raises(ReportError, match="after the data"):
        plan_weeks(small["db"], since="2030-W01")


def test_all_weeks_skips_the_empty_weeks_of_the_corpus(corpus_store):
    # the real transcripts span many weeks, most of them without a session (issue 28 item 8)
    plan = plan_weeks(corpus_store, all_weeks=True)
    held = held_weeks(corpus_store)
    assert plan.weeks == held and plan.skipped, plan
    assert not set(plan.weeks) & set(plan.skipped)
    assert sorted(plan.weeks + plan.skipped)[0] == held[0]
    assert select_weeks(corpus_store, all_weeks=True) == held


@pytest.mark.slow
def test_several_weeks_render_in_one_kernel_each_its_own_week(corpus_store, corpus_reports,
                                                              tmp_path):
    # --since renders the weeks in one shared kernel (%reset -f between them): each report is
    # its own week's, and a failing run there stops with the same one-line error as papermill's.
    # The render read is the run's one `report weekly --since 2026-W31` of the corpus (conftest
    # corpus_reports, shared with test_report_shapes.py and test_report_layout.py; issue 28
    # item 1: this test rendered two weeks of its own); the failing run goes over a copy.
    from conftest import CORPUS_SINCE

    weeks = plan_weeks(corpus_store, since=CORPUS_SINCE).weeks
    assert len(weeks) >= 2  # several weeks, one kernel
    for week in weeks:
        page = (corpus_reports / week / "weekly_health.html").read_text()
        assert f"brainlab weekly health — {week}" in page
        summary = json.loads((corpus_reports / week / "summary.json").read_text())
        assert summary["week"] == week and summary["cc_sessions"] > 0
        nb = nbformat.read(str(corpus_reports / week / "weekly_health.ipynb"), as_version=4)
        assert nb.metadata["brainlab"]["parameters"]["week"] == week
        assert "%reset" not in nb.cells[0].source  # the session's setup cell is not kept
        assert not [o for c in nb.cells for o in c.get("outputs", [])
                    if o.get("output_type") == "error"]
    out = tmp_path / "reports"
    shutil.copytree(corpus_reports, out)
    before = (out / weeks[0] / "weekly_health.html").read_bytes()
    bad = tmp_path / "thresholds.toml"
    bad.write_text("[thresholds]\nno_such_threshold = 1\n")
    brainlab = Path(sys.executable).with_name("brainlab")
    failed = subprocess.run([str(brainlab), "report", "weekly", "--since", weeks[0], "--db",
                             str(corpus_store), "--out", str(out), "--thresholds", str(bad)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert failed.returncode == 1
    errors = failed.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("Error: report notebook failed in cell")
    assert "ConfigError" in errors[0] and "no_such_threshold" in errors[0]
    assert (out / weeks[0] / "weekly_health.html").read_bytes() == before
    assert (out / weeks[0] / "weekly_health.failed.ipynb").exists()
