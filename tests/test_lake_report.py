"""The weekly report and a notebook run unchanged on a store attached to a lake (issue 15 §3).

The demo brain (brain files + transcripts) is exported to a lake as one user, attached, and
notebook 01 executed for real (papermill) on the attached file; the report is rendered once
by the CLI (`report weekly --lake`, a subprocess) on that user's lake with a second user's
calls beside, and read by both report tests.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import papermill as pm
import pytest

from brainlab.lab import read_records
from brainlab.lake import attach_lake, export_store
from brainlab.lake.attach import attach_for_report
from brainlab.metrics import report as data
from brainlab.metrics.people import week_people
from brainlab.metrics.report import Week

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


def test_weekly_report_on_an_attached_lake(team_report, demo):
    """The report on a store attached to a lake gives the demo's own figures for the week:
    read from the team report's render (:func:`team_report`, the CLI's ``--lake``, which
    attaches by ``attach_lake`` as ``brainlab attach`` does), where ada's partition is the
    demo store exported and bob adds transcript calls alone (no brain session, no health).
    It rendered the same week of the ada-only lake in-process before (issue 28 item 1,
    docs/testing.md stop 21)."""
    week = team_report["week"].label
    text = team_report["page"].read_text(encoding="utf-8")
    assert 'data-chart="usage-per-day"' in text and 'data-chart="agent-cost"' in text
    summary = json.loads((team_report["page"].parent / "summary.json").read_text())
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


@pytest.fixture(scope="module")
def team_lake(demo, tmp_path_factory):
    """The demo exported as ada on her laptop, and bob's calls of the same week on two
    machines (one session, 3 calls on his desk and 2 on his laptop), exported likewise."""
    from datetime import timedelta

    from brainlab.store import open_writer
    from brainlab.transcripts.ingest import ingest_claude
    from tests import claude_factory as f

    base = tmp_path_factory.mktemp("team-report")
    lake = base / "lake"
    week = Week.parse(data.session_weeks(demo["db"])[-1])
    export_store(demo["db"], lake, user="ada", machine="laptop")
    day = (week.start + timedelta(days=2)).isoformat()
    for machine, calls in (("desk", 3), ("laptop", 2)):
        lines = [f.assistant("bob-s1", f"{day}T1{i}:00:00.000Z", f"m-{machine}-{i}",
                             f"r-{machine}-{i}", f.usage(inp=100, out=50 * (i + 1)),
                             model="claude-sonnet-4-5-20250929")
                 for i in range(calls)]
        f.write(base / machine / "projects" / "-home-bob-p" / "bob-s1.jsonl", lines)
        store = base / f"bob-{machine}.duckdb"
        con = open_writer(store)
        try:
            ingest_claude(con, base / machine, workers=1)
        finally:
            con.close()
        export_store(store, lake, user="bob", machine=machine)
    return {"base": base, "lake": lake, "week": week}


@pytest.fixture(scope="module")
def team_report(team_lake):
    """`report weekly --lake DIR --week W` on the team lake (the real CLI, a subprocess), once
    a module: read by the per-person table test and the attached-lake test."""
    import subprocess
    import sys

    base, week = team_lake["base"], team_lake["week"]
    brainlab = str(Path(sys.executable).parent / "brainlab")
    done = subprocess.run([brainlab, "report", "weekly", "--lake", str(team_lake["lake"]),
                           "--out", str(base / "reports"), "--week", week.label],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return {**team_lake, "done": done, "page": base / "reports" / week.label /
            "weekly_health.html"}


def test_team_report_has_a_per_person_table(team_lake, team_report, request):
    """Issue 27.3: `report weekly --lake DIR` (the real CLI, a subprocess) renders a People
    section: calls, tokens, cost and sessions per user, and per machine (bob has two); the
    rows add up to the week's usage section; `--user bob` keeps bob only. Checked in
    headless Chromium (no console error, no live element) and at 1280 px."""
    from tests.report_helpers import active_content, chromium_available

    base, week = team_lake["base"], team_lake["week"]
    db = base / "reports" / "lake.duckdb"
    people = week_people(db, week)  # before: no lake_files view, no People section
    by_user = people["by_user"].set_index("user")
    assert list(by_user.index) == sorted(by_user.index, key=lambda u: -by_user.cost_usd[u])
    assert set(by_user.index) == {"ada", "bob"}
    assert (by_user.calls["bob"], by_user.machines["bob"], by_user.sessions["bob"]) == (5, 2, 1)
    usage = data.transcript_usage(db, week)["by_model"]
    assert by_user.calls.sum() == usage.requests.sum()
    assert by_user.cost_usd.sum() == pytest.approx(usage.cost_usd.sum())
    machines = people["by_machine"].set_index(["user", "machine"]).calls
    assert (machines["bob", "desk"], machines["bob", "laptop"]) == (3, 2)
    page = team_report["page"]
    text = page.read_text(encoding="utf-8")
    assert '<section class="report-section" id="people"><h2>People</h2>' in text
    assert "<h3>By machine</h3>" in text
    bob_only = attach_for_report(team_lake["lake"], base / "bob", users=("bob",))
    assert list(week_people(bob_only, week)["by_user"].user) == ["bob"]
    if not chromium_available():
        pytest.skip("no chromium: the HTML was checked, not rendered")
    browser = request.getfixturevalue("report_browser")  # after the skip: no browser needed
    png = base / "people.png"
    dom, console, _ = browser.load(page, width=1280, height=900, png=png)
    assert 'id="people"' in dom and not active_content(dom.split('id="people"')[1][:5000])
    assert not [line for line in console if "rror" in line], console
    assert png.stat().st_size > 10_000


def test_report_user_without_lake_is_one_error_line(tmp_path):
    from click.testing import CliRunner

    from brainlab.cli import main

    result = CliRunner().invoke(main, ["report", "weekly", "--user", "bob", "--out",
                                       str(tmp_path)])
    assert result.exit_code == 1
    assert result.output.startswith("Error: --user and --machine choose partitions of a lake")
