"""Trends that say how sure they are (issue 43): intervals, change points, comparisons, agents.

The planted test reads the demo brain (its build-brain week, planted by ``build-week``); the
null tests synthesize brains with no plant at all (``SynthOptions(plants=())``, as
``brainlab synth --plants none``) and must flag nothing. The false-alarm rate over many null
seeds is measured by benchmarks/bench_trend_false_alarms.py, not here.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import built_once

from brainlab.metrics import changepoints, trends
from brainlab.metrics.intervals import bootstrap, bootstrap_difference, newcombe, wilson
from brainlab.spec.trend_direction import DIRECTIONS, direction_of
from brainlab.spec.weeks import Week
from brainlab.store import open_writer
from brainlab.store.ingest import ingest_brain
from brainlab.synth import SynthOptions, synthesize
from brainlab.synth.model import WASTED_AGENT
from brainlab.transcripts.ingest import ingest_claude

BRAINLAB = str(Path(sys.executable).with_name("brainlab"))


def test_wilson_and_newcombe_known_values():
    """Wilson's interval of 0 of 10 and 5 of 10 (Newcombe 1998, table I); a share stays in [0, 1]."""
    none = wilson(0, 10)
    assert none.value == 0 and none.low == 0 and none.high == pytest.approx(0.2775, abs=1e-4)
    half = wilson(5, 10)
    assert (half.low, half.high) == (pytest.approx(0.2366, abs=1e-4),
                                     pytest.approx(0.7634, abs=1e-4))
    # Newcombe 1998 (method 10), example (a): 56/70 - 48/80 = 0.2, interval 0.0524 to 0.3339
    diff = newcombe(56, 70, 48, 80)
    assert diff.value == pytest.approx(0.2)
    assert (diff.low, diff.high) == (pytest.approx(0.0524, abs=1e-3),
                                     pytest.approx(0.3339, abs=1e-3))
    assert diff.excludes_zero and not newcombe(5, 10, 4, 10).excludes_zero


def test_bootstrap_is_seeded_and_covers_the_mean():
    rng = np.random.default_rng(1)
    values = rng.normal(10, 2, size=40)
    a, b = bootstrap(values), bootstrap(values)
    assert a == b  # the same page twice: the same interval
    assert a.low < values.mean() < a.high and a.n == 40 and a.method == "bootstrap"
    assert bootstrap([3.0]).low is None  # one value: no interval
    shifted = bootstrap_difference(values + 3, values)
    assert shifted.excludes_zero and shifted.value == pytest.approx(3)
    assert not bootstrap_difference(rng.normal(10, 2, 40), values).excludes_zero


def _seeded(samples, stat="mean"):
    """The bootstrap draws as the seeded generator gives them, drawn afresh (the reference)."""
    from brainlab.metrics.intervals import DRAWS, SEED

    rng = np.random.default_rng(SEED)
    f = np.median if stat == "median" else np.mean
    return [f(x[rng.integers(0, len(x), size=(DRAWS, len(x)))], axis=1) for x in samples]


@pytest.mark.parametrize("sizes", [(2, 7), (31, 5), (255, 256), (300, 40)])
def test_kept_resample_indices_give_the_seeded_intervals_exactly(sizes):
    """Issue 43 speed: the indices of small samples are drawn once and kept; the intervals
    are those of the seeded generator drawn afresh, to the last bit, alone and in pairs, a
    second time (from the kept indices) as the first, medians as means."""
    from brainlab.metrics.intervals import LEVEL

    rng = np.random.default_rng(sum(sizes))
    a, b = (rng.normal(5, 2, n) for n in sizes)
    levels = [(1 - LEVEL) / 2, (1 + LEVEL) / 2]
    for stat in ("mean", "median", "mean"):
        (alone,) = _seeded([a], stat)
        want = tuple(np.quantile(alone, levels))
        assert (bootstrap(a, stat).low, bootstrap(a, stat).high) == want
        after, before = _seeded([a, b], stat)
        want = tuple(np.quantile(after - before, levels))
        got = bootstrap_difference(a, b, stat)
        assert (got.low, got.high) == want


def test_every_series_has_a_direction_defined_once():
    for series in trends.SERIES + ("agent:helloWorld",):
        assert direction_of(series).metric in DIRECTIONS
    assert DIRECTIONS["coach_triggers"].higher_is_better is False
    assert DIRECTIONS["health"].higher_is_better is True


def _weeks(n: int) -> list[str]:
    first = Week.parse("2026-W30")
    return [first.shifted(i).label for i in range(n)]


def test_scan_finds_a_step_and_not_noise():
    """A step of 2 standard deviations in a 12-week series of 15 sessions a week is found at
    its week; 20 pure-noise series flag nothing."""
    rng = np.random.default_rng(7)
    labels = _weeks(12)
    step = [rng.normal(5 + (2 if i >= 7 else 0), 1, size=15) for i in range(12)]
    found = changepoints.scan("health:use-brain", labels, step)
    assert [c.period for c in found] == [labels[7]] and found[0].direction == "up"
    assert found[0].difference.excludes_zero
    for _ in range(20):
        noise = [rng.normal(5, 1, size=15) for _ in range(12)]
        assert changepoints.scan("health:use-brain", labels, noise) == []


def _agent_rows(loads: list[list[int]], agent: str = "newcomer") -> pd.DataFrame:
    rows = []
    for i, week in enumerate(_weeks(len(loads))):
        start = Week.parse(week).start
        for j, loaded in enumerate(loads[i]):
            rows.append({"series": f"agent:{agent}", "metric": "agent_load_cost",
                         "subject": f"s{i}-{j}", "started_at": pd.Timestamp(start),
                         "day": start, "iso_week": week, "week_start": start,
                         "project": None, "value": 1200.0 * loaded})
    return pd.DataFrame(rows)


def test_an_agent_that_appears_is_new_not_a_change_point():
    """Loaded in no session of the first 6 weeks, then in most: "new", and no change point
    (the issue: kernel-orchestrator was "growing" only because it did not exist before)."""
    rng = np.random.default_rng(3)
    loads = [[0] * 15 for _ in range(6)] + [list(rng.random(15) < 0.8) for _ in range(6)]
    obs = _agent_rows(loads)
    assert trends.changes(obs).empty
    classes = trends.agent_classes(obs)
    assert classes.set_index("agent").loc["newcomer", "class"] == "new"
    gone = _agent_rows(loads[::-1], "leaver")
    assert trends.agent_classes(gone).set_index("agent").loc["leaver", "class"] == "gone"
    stable = _agent_rows([list(rng.random(15) < 0.5) for _ in range(12)], "steady")
    assert trends.agent_classes(stable).set_index("agent").loc["steady", "class"] == "stable"


def test_planted_build_week_is_found_within_one_week(demo):
    """The demo's build-brain week (plant build-week) is a change point within one week of it,
    and the scan is what `brainlab trends --json` prints."""
    planted = Week.parse(demo["planted"]["build-brain-heavy week"]["iso_week"])
    found = trends.changes(trends.observations(demo["db"]))
    near = {planted.shifted(d).label for d in (-1, 0, 1)}
    hits = found[found["week"].isin(near)]
    assert not hits.empty, found
    build = hits[hits["series"] == "share:build-brain"]
    assert set(build["direction"]) == {"up", "down"}  # the week starts and ends


def test_brainlab_trends_json_and_compare(demo):
    done = subprocess.run([BRAINLAB, "trends", "--db", str(demo["db"]), "--json", "--compare",
                           "2026-W43", "--to", "2026-W40..2026-W42"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["changes"], result
    for change in result["changes"]:
        assert {"series", "week", "direction", "before", "after", "difference", "low",
                "high"} <= set(change)
    compared = {c["series"]: c for c in result["compare"]}
    coach = compared["coach_triggers"]
    assert coach["target"] > coach["baseline"] and coach["verdict"] == "worse"
    assert coach["low"] > 0  # the difference's interval excludes 0
    assert {c["class"] for c in result["agents"]["classes"]} <= {
        "new", "gone", "growing", "shrinking", "stable", "not loaded"}
    text = subprocess.run([BRAINLAB, "trends", "--db", str(demo["db"])], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "COLUMNS": "80"})
    assert text.returncode == 0 and "since 2026-W4" in text.stdout
    lines = text.stdout.splitlines()
    assert max(map(len, lines)) <= 80, lines  # 80 columns: long lines wrap between words
    since = next(i for i, line in enumerate(lines) if line.startswith("  since "))
    assert lines[since + 1].startswith("    ")  # a change's rest goes under its own text
    wide = subprocess.run([BRAINLAB, "trends", "--db", str(demo["db"])], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "COLUMNS": "400"})
    assert " ".join(wide.stdout.split()) == " ".join(text.stdout.split())  # the same words
    assert len(wide.stdout.splitlines()) < len(lines)
    bad = subprocess.run([BRAINLAB, "trends", "--db", str(demo["db"]), "--compare", "2026-W43"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 1 and bad.stderr.startswith("Error: --compare and --to")
    assert "Traceback" not in bad.stderr


def test_trends_on_an_empty_store(empty_store):
    done = subprocess.run([BRAINLAB, "trends", "--db", str(empty_store)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Nothing to scan" in done.stdout and "brainlab ingest brain" in done.stdout


# the tests of the shared null stores run on one worker: split, the second waited for the
# first one's build (4-13 s idle in a run, docs/testing.md stop 26)
NULL_GROUP = "trends_null"


@pytest.fixture(scope="module")
def null_stores(tmp_path_factory) -> list[Path]:
    """Two 12-week brains with no plant (synth --plants none), transcripts ingested; built
    once a run for both xdist workers (conftest.built_once: each worker running a test of
    this file built both before, ~9 CPU-s); read only."""
    def build(folder: Path) -> None:
        for seed in (301, 302):
            base = folder / f"null{seed}"
            manifest = synthesize(base / "brain", SynthOptions(weeks=12, seed=seed, plants=()))
            (base / "manifest.pickle").write_bytes(pickle.dumps(manifest))
            ingest_brain(base / "db.duckdb", base / "brain")
            con = open_writer(base / "db.duckdb")
            try:
                ingest_claude(con, base / "brain" / "claude", workers=1)
            finally:
                con.close()

    folder = built_once(tmp_path_factory, "trends-null-stores", build)
    return [folder / f"null{seed}" / "db.duckdb" for seed in (301, 302)]


@pytest.mark.xdist_group(NULL_GROUP)
def test_null_histories_flag_nothing(null_stores):
    """No plant, no change point: every series, weekly and daily."""
    for db in null_stores:
        obs = trends.observations(db)
        assert {"ratio", "coach_triggers", "cost_per_session", "agent_load_cost"} <= set(
            obs["series"])
        for period in ("week", "day"):
            found = trends.changes(obs, period)
            assert found.empty, (db, period, found)


@pytest.mark.xdist_group(NULL_GROUP)
def test_plants_none_draws_no_build_week_nor_wasted_agent(null_stores):
    """--plants none: no week of build-brain sessions only, no always-loaded agent (the
    brain of seed 301 the null stores were built from, and what synthesize returned)."""
    brain = null_stores[0].parent
    manifest = pickle.loads((brain / "manifest.pickle").read_bytes())
    weeks: dict[int, set] = {}
    for s in manifest.sessions:
        weeks.setdefault(s.week, set()).add(s.category)
        assert WASTED_AGENT not in s.agents_loaded
    assert all(cats != {"build-brain"} for cats in weeks.values())
    assert json.loads((brain / "brain" / "synth_manifest.json").read_text())["planted"] == [
        p for p in manifest.planted]
    assert not any(p.get("plant") for p in manifest.planted)


# --- the store view and the report's charts (issue 43 items 2 and 4) ---------------------------

def test_the_store_view_lists_what_trends_json_lists(demo):
    """trend_changes (written by the demo's ingest) holds the rows of `trends --json --daily`."""
    done = subprocess.run([BRAINLAB, "trends", "--db", str(demo["db"]), "--json", "--daily"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    printed = {(c["scale"], c["series"], c["period"], c["week"], c["direction"],
                round(c["before"], 9), round(c["after"], 9))
               for c in json.loads(done.stdout)["changes"]}
    from brainlab.store import query

    view = query(demo["db"], "SELECT scale, series, period, week, direction, before, after"
                             " FROM trend_changes")
    stored = {(r.scale, r.series, r.period, r.week, r.direction, round(r.before, 9),
               round(r.after, 9)) for r in view.itertuples()}
    assert printed and stored == printed
    assert ("week", "share:build-brain") in {(s[0], s[1]) for s in stored}  # the plant


def _report_sections(db: Path, week: str) -> dict[str, str]:
    import io
    from contextlib import redirect_stdout

    from brainlab.report import sections

    with redirect_stdout(io.StringIO()):
        ctx = sections.open_report(db=str(db), week=week)
        try:
            return {name: getattr(sections, name)(ctx) for name in ("headline", "health",
                                                                    "ratio")}
        finally:
            sections.finish(ctx)


def test_the_report_draws_each_change_point_on_its_charts(demo, charts_here):
    """The W43 plant: a dashed rule in the sessions chart, with its legend and tooltip."""
    from brainlab.report import sections
    from brainlab.viz import charts

    week = demo["planted"]["build-brain-heavy week"]["iso_week"]
    ctx = sections.ReportContext(db=demo["db"], week=Week.parse(week).shifted(2),
                                 thresholds=trends.Thresholds())
    marks = ctx.marks(prefix="share:")
    assert any(m.startswith(f"since {week}: share:build-brain up") for m in marks["since"]), marks
    spec = charts.spec(charts.sessions_per_week(pd.DataFrame({
        "iso_week": [week], "sessions": [3], "n_use": [1], "n_build": [1], "n_explore": [1]}),
        marks))
    rules = [layer for layer in spec["layer"] if layer.get("mark", {}).get("type") == "rule"]
    assert rules and rules[0]["encoding"]["tooltip"][0]["field"] == "since"
    html = _report_sections(demo["db"], Week.parse(week).shifted(2).label)
    assert "change point (up)" in html["headline"] and "change point (down)" in html["headline"]
    assert "since " + week in html["headline"]  # the tooltip's words (the SVG's aria label)


@pytest.mark.xdist_group(NULL_GROUP)
def test_a_null_history_draws_no_change_marker(null_stores, charts_here):
    """synth --plants none: the report's charts carry no change point, in legend or mark."""
    from brainlab.store import query

    db = null_stores[0]
    assert query(db, "SELECT count(*) AS n FROM trend_change_scan")["n"][0] == 0
    week = query(db, "SELECT max(iso_week) AS w FROM trend_observations_for() "
                     "WHERE series = 'ratio'")["w"][0]
    html = _report_sections(db, week)
    assert html["headline"] and html["health"] and html["ratio"]
    assert not any("change point" in fragment for fragment in html.values())


def test_the_weekly_table_and_ratio_chart_carry_n_and_intervals(demo):
    """Notebook 01's weekly table: n and a 95% interval beside each mean and share."""
    from brainlab import metrics
    from brainlab.viz import charts, explore

    obs = trends.observations(demo["db"])
    table = trends.weekly_table(metrics.weekly_health(demo["db"], trends.Thresholds()), obs)
    assert list(table.columns) == trends.WEEKLY_TABLE
    week = demo["planted"]["build-brain-heavy week"]["iso_week"]
    row = table.set_index("iso_week").loc[week]
    assert row.health_low <= row.mean_health <= row.health_high and row.health_n > 1
    assert row.ratio_low <= row.mean_ratio <= row.ratio_high and row.ratio_n == row.sessions
    assert row.coach_low <= row.coach_share <= row.coach_high  # Wilson's
    assert row.coach_share * row.ratio_n == pytest.approx(row.coach_triggers)
    weekly = trends.points(obs, "week", series=["ratio"])
    spec = charts.spec(explore.ratio_bands(metrics.signals(demo["db"], trends.Thresholds()),
                                           weekly=weekly))
    tips = [layer["encoding"].get("tooltip") for layer in spec["layer"]
            if layer.get("mark", {}).get("shape") == "diamond"]
    assert tips and {"n"} <= {t["field"] for t in tips[0]}


def test_the_scan_calls_ruptures_pelt_and_finds_its_breakpoints():
    """pelt_l2 (ruptures' C routine loaded alone) gives KernelCPD's own breakpoints."""
    import ruptures
    from scipy.special import ndtri

    rng = np.random.default_rng(5)
    for size in (6, 12, 52, 200):
        for step in (0.0, 1.5, 4.0):
            z = rng.normal(size=size) + step * (np.arange(size) > size // 3)
            pen = changepoints.penalty_for(size)
            assert changepoints.pelt_l2(z, pen) == ruptures.KernelCPD(
                kernel="linear", min_size=1).fit(z).predict(pen=pen)
    groups = [rng.normal(size=4).round(1) for _ in range(8)]  # ties averaged
    flat = np.concatenate(groups)
    import pandas as pd

    ranks = pd.Series(flat).rank(method="average").to_numpy()
    assert np.allclose(np.concatenate(changepoints.normal_scores(groups)),
                       ndtri((ranks - 0.5) / len(flat)), atol=1e-12)


def test_a_scan_does_not_import_scipy_stats():
    """The report kernel pays for the scan, not for ruptures' other costs (docs/trends.md §6)."""
    code = ("import sys; from brainlab.metrics import changepoints; import numpy as np; "
            "r = changepoints.scan('x', list('abcdefgh'), [np.ones(3) * (i > 3) + np.arange(3)"
            " for i in range(8)]); print(len(r), 'scipy.stats' in sys.modules,"
            " 'ruptures' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[1:] == ["False", "False"], done.stdout
