"""The weekly report and a notebook run unchanged on a store attached to a lake (issue 15 §3).

The demo brain (brain files + transcripts) is exported to a lake as one user, attached, and
the report and notebook 01 are executed for real (papermill) on the attached file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import papermill as pm
import pytest

from brainlab.lab import read_records
from brainlab.lake import attach_lake, export_store
from brainlab.metrics import report as data
from brainlab.metrics.report import Week
from brainlab.report import render_weekly

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def attached(demo, tmp_path_factory):
    base = tmp_path_factory.mktemp("lake-report")
    export_store(demo["db"], base / "lake", user="ada", machine="laptop")
    db = base / "attached.duckdb"
    summary = attach_lake(base / "lake", db)
    assert {"raw_metabolism_logs", "agents", "cc_request_lines"} <= set(summary.views)
    return {"base": base, "db": db}


def test_weekly_report_on_an_attached_lake(attached, demo):
    week = data.session_weeks(demo["db"])[-1]
    out = attached["base"] / "reports"
    page = render_weekly(attached["db"], week, out)
    text = page.read_text(encoding="utf-8")
    assert 'data-chart="usage-per-day"' in text and 'data-chart="agent-cost"' in text
    summary = json.loads((out / week / "summary.json").read_text())
    expected = data.week_figures(demo["db"], Week.parse(week))
    assert summary["sessions"] == expected["sessions"] > 0
    assert summary["mean_health"] == pytest.approx(expected["mean_health"])


def test_notebook_on_an_attached_lake(attached, demo, tmp_path):
    path = ROOT / "notebooks" / "01_metabolism_trends.ipynb"
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), previous) if p)
    try:
        nb = pm.execute_notebook(str(path), str(tmp_path / path.name),
                                 parameters={"db_path": str(attached["db"])},
                                 kernel_name="python3", cwd=str(path.parent),
                                 progress_bar=False, execution_timeout=300,
                                 engine_name="brainlab")
    finally:
        if previous is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = previous
    records = read_records(nb)
    assert records["lowest_ratio_week"] == demo["planted"]["build-brain-heavy week"]["iso_week"]
    agent = demo["planted"]["agent loaded in ~95% of sessions and never used"]["agent"]
    assert records["wasted_agents"] == [agent]
