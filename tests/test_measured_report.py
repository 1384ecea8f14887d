"""Transcripts alone give the metabolism (issue 13 §4) and the weekly report shows the audit
(§5): real ingests of the synthetic brain's transcripts, a real papermill run."""

from __future__ import annotations

from pathlib import Path

import pytest
from notebook_runs import GROUP

from brainlab import metrics
from brainlab.metrics import report as metrics_report
from brainlab.metrics.report import Week
from brainlab.report import render_weekly
from brainlab.store import open_writer, query
from brainlab.transcripts.ingest import ingest_claude

# starts Jupyter kernels: its xdist group is in tests/conftest.py KERNEL_GROUPS; the notebook
# tests read the shared runs of tests/notebook_runs.py (group GROUP)
NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "06_logged_vs_measured.ipynb"


@pytest.fixture(scope="module")
def transcripts_only(demo, tmp_path_factory):
    """The demo's transcripts ingested into a store with no brain files at all."""
    db = tmp_path_factory.mktemp("transcripts_only") / "t.duckdb"
    con = open_writer(db)
    try:
        ingest_claude(con, demo["root"] / "claude", workers=1)
    finally:
        con.close()
    return db


def test_transcripts_alone_give_health_ratio_coach_conserve_and_agent_cost(transcripts_only,
                                                                           demo):
    """Every signal of the demo exists from transcripts alone, close to the logs' own."""
    signals = query(transcripts_only, "SELECT * FROM session_signals")
    assert signals.health_score.notna().sum() > 100
    assert signals.ratio.notna().sum() > 100
    assert signals.coach_triggered.any()  # the planted build-brain week fires it
    assert signals.is_inefficient.any()  # SPEC §3.3 conserve: peak > 70 and health < 1
    cost = metrics.agent_cost(transcripts_only)
    wasted = demo["planted"]["agent loaded in ~95% of sessions and never used"]["agent"]
    assert wasted in cost[cost.is_always_loaded].agent.tolist()
    weeks = query(transcripts_only, "SELECT * FROM weekly_health")
    # every planned session but the one planted without a transcript, and the mode plants'
    # extra brain sessions (issue 14, synth/mode_plants.py); the focus sprints' sessions
    # (synth/focus.py) have no type, so no scored category: weekly_health leaves them out
    extra = [i for p in demo["manifest"].planted if not p["effect"].startswith("focus:")
             for i in p.get("transcript_sessions", [])]
    assert len(weeks) == 12
    assert weeks.sessions.sum() == len(demo["manifest"].sessions) - 1 + len(extra)


@pytest.mark.parametrize("store, basis", [("transcripts_only", "best"),
                                          ("corpus_store", "measured")])
def test_weekly_report_on_transcripts_only(store, basis, request, tmp_path):
    """The report renders from transcripts alone (synthetic brain sessions on the default
    basis; the real corpus, which declares no brain type, on the measured basis)."""
    db = request.getfixturevalue(store)
    week = query(db, "SELECT strftime(max(started_at), '%G-W%V') AS w FROM "
                     "cc_session_measures").w[0]
    page = render_weekly(db, week, tmp_path / "reports", basis=basis)
    text = page.read_text(encoding="utf-8")
    if store == "transcripts_only":  # brain session types: the metabolism, from transcripts
        assert "Logged versus measured" in text
        assert "No metabolism logs in the store" in text
    else:  # plain Claude Code sessions: measured figures, the rest named in one line
        assert "Measured from Claude Code transcripts" in text
        assert text.count("Not shown, no data for them in this store") == 1


@pytest.fixture(scope="module")
def stretch_week(demo, tmp_path_factory) -> dict:
    """The demo's under-reported stretch week rendered once on the measured basis (papermill,
    read only): the disagreements test and the basis test each rendered it, the second twice
    (issue 28 item 1). The audit section is the same on every basis (it compares the logs
    with the transcripts, data.audit_week); ``page``: the HTML, ``week``, ``first``: the
    stretch's first session."""
    under = next(p for p in demo["manifest"].planted if p.get("audit_field") == "tokens_used")
    first = sorted(under["sess_ids"])[0]
    week = query(demo["db"], "SELECT strftime(started_at, '%G-W%V') AS w FROM "
                 "stg_metabolism_sessions WHERE sess_id = ?", [first]).w[0]
    page = render_weekly(demo["db"], week, tmp_path_factory.mktemp("stretch") / "reports",
                         basis="measured")
    return {"week": week, "first": first, "page": page.read_text(encoding="utf-8")}


def test_weekly_report_lists_the_weeks_disagreements(stretch_week):
    """The under-reported stretch's week shows tokens_used disagreements and its offenders."""
    text = stretch_week["page"]
    section = text[text.index('id="audit"'):]
    section = section[:section.index("</section>")]
    assert "tokens_used" in section and stretch_week["first"] in section


def _run_notebook(store_kernels, store: str):
    """Notebook 06 as the lab runs it on ``store``: its one execution per run (notebook_runs)."""
    nb, records, error, _seconds = store_kernels(store, NOTEBOOK)
    assert error is None, error
    text = "".join(o.get("text", "") + o.get("data", {}).get("text/markdown", "")
                   for c in nb.cells for o in c.get("outputs", []))
    return records, text


@pytest.mark.xdist_group(GROUP)
def test_notebook_06_finds_the_plants_and_the_basis_matters(demo, store_kernels):
    """On the demo: the audited sessions are the planted ones; logged and measured differ."""
    records, _ = _run_notebook(store_kernels, "demo")
    planted = {i for p in demo["manifest"].planted if p.get("audit_field") for i in p["sess_ids"]}
    assert records["sessions_disagreeing"] == len(planted)
    assert records["coverage"]["unmatched"] == 1
    triggers = records["coach_triggers_by_basis"]
    assert triggers["logged"] != triggers["measured"]


@pytest.mark.xdist_group(GROUP)
@pytest.mark.parametrize("shape", ["corpus", "template", "empty"])
def test_notebook_06_on_every_store_shape(shape, store_kernels):
    """Transcripts only, brain files only, nothing: it runs and names the missing command."""
    records, text = _run_notebook(store_kernels, shape)
    if records["coverage"]["transcripts"] == 0:
        assert "brainlab ingest claude" in text
    if records["coverage"]["logs"] == 0:
        assert "brainlab ingest brain" in text


def test_report_basis_changes_the_headline(demo, stretch_week, charts_here):
    """`--basis logged` and `--basis measured` give different health for the stretch week.

    The measured page is the papermill render (the basis reaches the notebook); the logged
    one's title is its section run in this process (issue 28 item 1: a second render)."""
    from brainlab.report import sections

    week = stretch_week["week"]
    assert "basis: measured" in stretch_week["page"] and "basis: logged" not in \
        stretch_week["page"]
    ctx = sections.open_report(str(demo["db"]), week, basis="logged")
    try:
        title = sections.title(ctx)
    finally:
        sections.finish(ctx)
    assert "basis: logged" in title and "basis: measured" not in title
    figures = {b: metrics_report.week_figures(demo["db"], Week.parse(week), basis=b)
               for b in ("logged", "measured")}
    assert figures["logged"]["mean_health"] > figures["measured"]["mean_health"]
