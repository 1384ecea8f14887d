"""Issue 28 item 8: what makes a week render fast must not change a figure (docs/report.md §4).

- the compliance section's frames, computed from ONE evaluation of ``violations``, equal the
  SQL ``metrics.compliance.weekly`` gives, week by week (columns, dtypes, rows, order);
- a render holds one read-only connection and ``sections.finish`` gives the store back to
  writers;
- a store-wide figure is reused only while the store is unchanged;
- the views a render materializes as temp tables hold the views' rows, and every section of
  a week (brain store and transcripts-only corpus) is the same with the render's caches and
  materialized views as without them;
- the report kernel's first cell imports neither the runner's stack (nbformat, papermill)
  nor the IRI grammar jsonschema would compile (the cell was 2.3 CPU-s; now ~0.9);
- the charts converted in a process of their own are the SVGs converted in the kernel's,
  a chart that process cannot convert raises the same error, a dead process gives way to
  the kernel's own conversion, and the render's end reaps it;

Real DuckDB files: the session's demo store, copied where a test writes.
"""

from __future__ import annotations

import io
import json
import math
import re
import shutil
import subprocess
import sys
from contextlib import redirect_stdout

import pandas as pd
import pytest
from conftest import built_once

from brainlab.metrics import compliance
from brainlab.metrics.report import Week
from brainlab.report import once, sections, select_weeks
from brainlab.store import HeldReader, open_writer, query, reader


@pytest.fixture
def store_copy(demo, tmp_path):
    """The demo store copied (a test that writes must not touch the session's store)."""
    path = tmp_path / "brainlab.duckdb"
    shutil.copy(demo["db"], path)
    return path


def test_compliance_of_every_week_equals_the_sql_figures(demo):
    """The weeks that differ in shape, each SQL figure (~1 CPU-s a week) against the one from
    the cached violations: the week with the most (its offenders cut at ten), a week with none
    but a history, the last (its trend spans every week: each week's count), and one before
    the first (no row at all). Every third week was checked before; the weeks left out hold
    1-3 violations, shapes these cover (issue 28 item 1, docs/testing.md stop 21). A wrong
    figure fails the comparison (the control at the end)."""
    weeks = select_weeks(demo["db"], all_weeks=True)
    with HeldReader(demo["db"]) as held:
        counts = once.violations(held).iso_week.value_counts()
    busiest = counts.idxmax()
    quiet = next(w for w in weeks if w not in counts and w > weeks[0])  # none, with a history
    checked = [busiest, quiet, weeks[-1], Week.parse(weeks[0]).shifted(-2).label]
    assert len(set(checked)) == 4 and counts[busiest] > 10, checked  # the offenders' cut
    seen, figures = 0, {}
    # the SQL's figures on one plain connection of their own (no temp table, no cache) on
    # one DuckDB thread, as a render's: a connection per query on every core cost ~0.3-0.4
    # CPU-s a week more (issue 28 item 1)
    with HeldReader(demo["db"]) as held, HeldReader(demo["db"], threads=1) as plain:
        for label in checked:
            week = Week.parse(label)
            start = week.shifted(-11).start_at
            sql = compliance.weekly(plain, week.start_at, week.end_at, start)
            mine = once.compliance_week(held, week.start_at, week.end_at, start)
            figures[label] = (sql, mine)
            for name in ("by_rule", "trend", "offenders"):
                if sql[name].empty:  # an empty frame's text columns: object or str, no row
                    assert mine[name].empty and list(mine[name]) == list(sql[name])
                    continue
                pd.testing.assert_frame_equal(mine[name], sql[name], obj=f"{label} {name}")
            key = ["rule", "subject", "occurred_at"]
            assert list(mine["week"]) == list(sql["week"])
            if sql["week"].empty:
                assert mine["week"].empty
                continue
            pd.testing.assert_frame_equal(
                mine["week"].sort_values(key).reset_index(drop=True),
                sql["week"].sort_values(key).reset_index(drop=True), obj=f"{label} week",
                check_dtype=False)  # ``line`` is Int64 when the store's violations hold a NULL
            seen += len(sql["week"])
    assert seen > 0, "the demo plants violations: some checked week must hold one"
    sql, mine = figures[weeks[-1]]
    assert set(sql["trend"].iso_week) == set(counts.index.dropna())  # every week's count
    wrong = sql["trend"].copy()  # the control: one week's count one off fails the comparison
    wrong.loc[len(wrong) // 2, "violations"] += 1
    with pytest.raises(AssertionError):
        pd.testing.assert_frame_equal(mine["trend"], wrong)


def test_a_render_holds_one_connection_and_finish_gives_the_store_back(store_copy,
                                                                        charts_here):
    with redirect_stdout(io.StringIO()):
        ctx = sections.open_report(db=str(store_copy), week="")
        assert isinstance(ctx.db, HeldReader)
        with reader(ctx.db) as first, reader(ctx.db) as second:
            assert first is second is ctx.db.connection()  # every section's query: one connection
        sections.compliance(ctx)
        sections.finish(ctx)
    con = open_writer(store_copy)  # refused while a reader of this process held the file
    con.close()


def test_a_store_wide_figure_is_reused_until_the_store_changes(store_copy):
    computed = []

    def count():  # what is computed is not the subject: a table's count, not the violations
        computed.append(1)  # view's (~0.5 CPU-s a query, twice: issue 40)
        return query(store_copy, "SELECT count(*) AS n FROM cc_request_lines")

    once.once(store_copy, "test-count", count)
    once.once(store_copy, "test-count", count)
    assert len(computed) == 1
    con = open_writer(store_copy)
    con.execute("CREATE TABLE once_probe AS SELECT 1 AS x")
    con.close()
    once.once(store_copy, "test-count", count)
    assert len(computed) == 2


def test_caching_off_runs_every_query_again(store_copy, monkeypatch):
    monkeypatch.setenv("BRAINLAB_REPORT_CACHE", "0")
    computed = []
    for _ in range(2):
        once.once(store_copy, "test-off", lambda: computed.append(1))
    assert len(computed) == 2 and not isinstance(once.store(store_copy), HeldReader)


def test_the_report_kernel_imports_only_what_the_sections_need():
    code = ("import sys\nfrom brainlab.report import sections\n"
            "print(sorted(m for m in ('nbformat', 'papermill', 'nbconvert', 'rfc3987_syntax',"
            " 'brainlab.report.weekly') if sys.modules.get(m) is not None))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_a_plain_reader_beside_a_held_one_works_and_stays_sealed(demo, tmp_path):
    outside = tmp_path / "secret.csv"
    outside.write_text("a\n1\n")
    with HeldReader(demo["db"]) as held:
        assert query(held, "SELECT count(*) AS n FROM rule_catalogue").n[0] > 0
        # a second connection of this process to the same file (a notebook's own query)
        assert query(demo["db"], "SELECT count(*) AS n FROM rule_catalogue").n[0] > 0
        with pytest.raises(Exception, match="Permission|access"):
            query(demo["db"], f"SELECT * FROM read_csv('{outside}')")


def test_a_progress_bar_widget_never_reaches_the_page():
    import nbformat

    from brainlab.report import html

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("sections.compliance(ctx);")
    cell.outputs = [  # what DuckDB displays under a query slower than 2 s (a busy machine)
        nbformat.v4.new_output("display_data", data={
            "application/vnd.jupyter.widget-view+json": {"model_id": "x", "version_major": 2,
                                                         "version_minor": 0},
            "text/plain": "FloatProgress(value=0.0, layout=Layout(width='auto'))"}),
        nbformat.v4.new_output("display_data", data={"text/html": "<p>kept</p>"})]
    nb.cells.append(cell)
    page = html.report_html(nb, "t")
    assert "kept" in page and "FloatProgress" not in page


def _same(a, b) -> bool:
    """Two values equal, floats to 1e-9 (DuckDB's parallel sums differ in their last digits)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9) or (math.isnan(a) and math.isnan(b))
    return a == b


def test_materialized_views_hold_the_rows_of_the_views(demo):
    with HeldReader(demo["db"], setup=once.materialize) as held:
        con = held.connection()
        temp = {name for (name,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()}
        assert temp == set(once.MATERIALIZED)  # the demo store holds every one of them
        with reader(demo["db"]) as plain:  # a connection of its own: the views themselves
            for name in sorted(once.MATERIALIZED):
                mine = sorted(con.execute(f"SELECT * FROM {name}").fetchall(), key=repr)
                theirs = sorted(plain.execute(f"SELECT * FROM {name}").fetchall(), key=repr)
                assert len(mine) == len(theirs), name
                assert all(_same(x, y) for r, t in zip(mine, theirs, strict=True)
                           for x, y in zip(r, t, strict=True)), name


def test_a_held_render_lists_the_stores_relations_once(demo, empty_store, monkeypatch):
    """``has_rows`` on a render's connection: one catalog query for every name asked (there
    were 14 a demo week), the answers those of a plain path: rows, no row, absent."""
    from brainlab.metrics import report as data

    names = ("sprints", "broker_recorded_releases", "limit_snapshots", "no_such_table",
             "tickets", "cc_requests")
    listed = []
    real = data._relations
    monkeypatch.setattr(data, "_relations", lambda d: listed.append(d) or real(d))
    for db in (demo["db"], empty_store):
        plain = {name: data.has_rows(db, name) for name in names}
        with HeldReader(db, setup=once.materialize) as held:
            assert {name: data.has_rows(held, name) for name in names} == plain
        assert len(listed) == 1
        listed.clear()
    assert plain == dict.fromkeys(names, False)  # the empty store
    assert data.has_rows(demo["db"], "sprints") and not data.has_rows(demo["db"], "no_such_table")


def _fragments(db, week: str) -> dict[str, str]:
    """Every section's HTML of ``week``, in this process (what the notebook's cells show)."""
    from brainlab.report.people import people

    found = {}
    with redirect_stdout(io.StringIO()):
        ctx = sections.open_report(db=str(db), week=week)
        for name in ("title", "headline", "health", "ratio", "conserve", "agents", "breath",
                     "regulator", "usage", "telemetry", "limits", "logged_vs_measured",
                     "hygiene", "compliance", "data_quality", "sessions"):
            found[name] = getattr(sections, name)(ctx)
        found["people"] = people(ctx)
        sections.finish(ctx)
    return {k: v or "" for k, v in found.items()}


NUMBER = re.compile(r"(\d+\.\d+)")


def _same_page(a: str, b: str) -> bool:
    """The same markup, numbers to 1e-9: DuckDB's parallel float sums differ in their last
    digits from run to run (the usage chart's bar heights, 2.9516475 or 2.95164749999...)."""
    x, y = NUMBER.split(a), NUMBER.split(b)
    return len(x) == len(y) and all(
        p == q or (i % 2 == 1 and math.isclose(float(p), float(q), rel_tol=1e-9))
        for i, (p, q) in enumerate(zip(x, y, strict=True)))


def _fresh_sections_counting_charts(patch) -> list:
    """With ``patch``: no chart process open nor cached report of an earlier render, and every
    chart process started from now on appended to the list returned (its ``Popen``)."""
    from brainlab.viz.chart_process import ChartProcess

    started = []
    real = ChartProcess.__init__

    def counted(self):
        real(self)
        started.append(self._proc)

    patch.setattr(sections, "_CHARTS_READY", None)
    patch.setattr(sections, "_CHARTS", None)
    patch.delenv("BRAINLAB_REPORT_CACHE", raising=False)
    patch.setattr(ChartProcess, "__init__", counted)
    return started


@pytest.fixture(scope="session")
def demo_last_week(demo, tmp_path_factory) -> dict:
    """The demo's last week, every section rendered in this process with the render's caches
    and the charts' process on (the defaults), once per run (conftest.built_once; read only):
    the chart process test and the caches test each rendered it themselves (~3 CPU-s).
    ``week``, ``fragments``, and of the chart processes the render started: ``started`` (how
    many), ``reaped`` (every one ended by the render's end), ``cleared`` (none left open)."""
    def build(folder):
        with pytest.MonkeyPatch.context() as patch:
            started = _fresh_sections_counting_charts(patch)
            patch.delenv(sections.CHART_PROCESS_ENV, raising=False)
            week = select_weeks(demo["db"])[-1]
            fragments = _fragments(demo["db"], week)
            record = {"week": week, "fragments": fragments, "started": len(started),
                      "reaped": all(p.returncode is not None for p in started),
                      "cleared": sections._CHARTS is None}
        (folder / "render.json").write_text(json.dumps(record))

    folder = built_once(tmp_path_factory, "demo-last-week-sections", build)
    return json.loads((folder / "render.json").read_text())


@pytest.fixture(scope="session")
def demo_last_week_here(demo, tmp_path_factory) -> dict:
    """The demo's middle week then its last week, every section rendered in this process
    with the render's caches on and the charts converted in this process (as ``charts_here``),
    once per run (conftest.built_once; read only): the caches test's cached render (the last
    week's coming after another week's, so ``once``'s store-wide figures were computed for
    another week) and the chart process test's render without the chart process, which
    rendered the same week the same way each (~2.5 CPU-s, issue 40). ``week``, ``middle``,
    ``fragments`` (the last week's), ``started`` (chart processes started while rendering)."""
    def build(folder):
        with pytest.MonkeyPatch.context() as patch:
            started = _fresh_sections_counting_charts(patch)
            patch.setenv(sections.CHART_PROCESS_ENV, "0")
            weeks = select_weeks(demo["db"], all_weeks=True)
            middle = weeks[len(weeks) // 2]
            _fragments(demo["db"], middle)  # fills once's store-wide figures: another week
            record = {"week": weeks[-1], "middle": middle,
                      "fragments": _fragments(demo["db"], weeks[-1]), "started": len(started)}
        (folder / "render.json").write_text(json.dumps(record))

    folder = built_once(tmp_path_factory, "demo-last-week-here", build)
    return json.loads((folder / "render.json").read_text())


@pytest.mark.parametrize("which", ["demo", "corpus"])
def test_every_section_is_the_same_with_the_render_caches_as_without(which, request,
                                                                      corpus_store, monkeypatch,
                                                                      charts_here):
    """The last week's every section with the caches (its render coming after the middle
    week's in this process, so the store-wide figures ``once`` keeps were computed for another
    week) equals the same week without them; on the demo also the run's shared render
    (``demo_last_week``, another process's, with the chart process). One render without the
    caches a store (~5.5 CPU-s on the demo, the cached ones ~1-2.6): the demo's twelve weeks
    show the same sections, so a second plain week checked no other section (issue 28 item 1,
    docs/testing.md stop 21)."""
    db = request.getfixturevalue("demo")["db"] if which == "demo" else corpus_store
    weeks = select_weeks(db, all_weeks=True)
    last = weeks[-1]
    assert weeks[len(weeks) // 2] != last
    if which == "demo":  # the run's one: the same two renders, in the same order
        here = request.getfixturevalue("demo_last_week_here")
        assert (here["middle"], here["week"]) == (weeks[len(weeks) // 2], last)
        cached = here["fragments"]
    else:
        _fragments(db, weeks[len(weeks) // 2])  # fills once's store-wide figures: another week
        cached = _fragments(db, last)
    monkeypatch.setenv("BRAINLAB_REPORT_CACHE", "0")
    plain = _fragments(db, last)
    monkeypatch.delenv("BRAINLAB_REPORT_CACHE")
    assert [k for k in cached if not _same_page(cached[k], plain[k])] == [], last
    assert sum(bool(v) for v in cached.values()) >= 5
    if which == "demo":
        shared = request.getfixturevalue("demo_last_week")
        assert shared["week"] == last
        assert [k for k in cached if not _same_page(cached[k], shared["fragments"][k])] == []


def test_a_renders_connection_runs_duckdb_on_one_thread_unless_told(demo, monkeypatch):
    # set before the reader's seal locks the settings (it was refused after it)
    for told, threads in ((None, 1), ("2", 2)):
        if told is None:
            monkeypatch.delenv(once.THREADS_ENV, raising=False)
        else:
            monkeypatch.setenv(once.THREADS_ENV, told)
        with once.store(demo["db"]) as held:
            found = held.connection().execute("SELECT current_setting('threads')").fetchone()
            assert found[0] == threads
            assert not held.connection().execute(
                "SELECT current_setting('enable_external_access')").fetchone()[0]  # sealed


def test_the_chart_process_gives_the_pages_svgs_and_errors_and_ends_with_the_render(
        demo_last_week, demo_last_week_here):
    import vl_convert

    from brainlab.viz.chart_process import ChartProcess

    # the render with the charts' process: the run's one (demo_last_week), its processes
    # counted while it ran
    week, by_process = demo_last_week["week"], demo_last_week["fragments"]
    assert demo_last_week["started"] == 1 and demo_last_week["reaped"]  # finish reaped it
    assert demo_last_week["cleared"]
    # the same week with the chart process switched off: the run's one (demo_last_week_here),
    # the chart processes counted while it ran
    assert demo_last_week_here["week"] == week
    in_kernel = demo_last_week_here["fragments"]
    assert demo_last_week_here["started"] == 0  # switched off: no chart process
    assert by_process == in_kernel  # byte for byte
    assert sum(v.count("<svg") for v in by_process.values()) >= 5

    charts = ChartProcess()
    try:
        bad = {"mark": "nonsense"}
        with pytest.raises(ValueError) as theirs:
            charts.submit(bad).result()
        with pytest.raises(ValueError) as mine:
            vl_convert.vegalite_to_svg(bad)
        assert str(theirs.value) == str(mine.value)
        good = {"data": {"values": [{"x": 1}]}, "mark": "bar",
                "encoding": {"x": {"field": "x", "type": "quantitative"}}}
        charts._proc.kill()
        charts._proc.wait()
        assert charts.submit(good).result() == vl_convert.vegalite_to_svg(good)
    finally:
        charts.close()
