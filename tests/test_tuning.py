"""brainlab.sim.tuning and the session_outcomes view on crafted sessions with hand-computed answers.

Every crafted session is use-brain (type work) with tokens_used = 10k and peak = 10 %, so the
SPEC §3.2 denominator is max(1, 10 * 0.10) = 1 and health = todos_closed * 10 + commits * 5.
S6 peaks at 90 % with no todo closed: saturated (SPEC §3.3, use-brain peak > 80), health 0/9.

    id  day         health  close  next health  label
    S1  Mon 01-05   10      65     S2 = 0       bad (next unhealthy)
    S2  Tue 01-06    0      30     S3 = 10      good
    S3  Wed 01-07   10      75     S4 = 0       bad
    S4  Thu 01-08    0      55     S5 = 10      good
    S5  Mon 01-12   10      40     S6 = 0       bad
    S6  Tue 01-13    0      85     S7 = 10      good (saturated: bad in session_outcomes.is_bad)
    S7  Wed 01-14   10      20     none         unlabelled

Two ISO weeks (2026-W02, 2026-W03). The tuning label is what followed (the next scored
session unhealthy, is_next_unhealthy): 3 bad sessions, 3 good, 1 unlabelled; the view's
is_bad also counts the saturated S6.
"""

from __future__ import annotations

import math
from datetime import datetime

import pytest

from brainlab.common.errors import ConfigError, SimulationError
from brainlab.sim import tuning
from brainlab.spec.thresholds import Thresholds
from brainlab.store import open_writer

SESSIONS = [  # id, started_at, todos_closed, context_peak_pct, context_at_close
    ("S1", datetime(2026, 1, 5, 9), 1, 10, 65),
    ("S2", datetime(2026, 1, 6, 9), 0, 10, 30),
    ("S3", datetime(2026, 1, 7, 9), 1, 10, 75),
    ("S4", datetime(2026, 1, 8, 9), 0, 10, 55),
    ("S5", datetime(2026, 1, 12, 9), 1, 10, 40),
    ("S6", datetime(2026, 1, 13, 9), 0, 90, 85),
    ("S7", datetime(2026, 1, 14, 9), 1, 10, 20),
]
CONSERVE = ("recommend_conserve_next",)


def _crafted_db(path, sessions=SESSIONS):
    con = open_writer(path)
    try:
        for sid, started, todos, peak, close in sessions:
            con.execute(
                "INSERT INTO raw_metabolism_logs (source_file, sess_id, started_at, type, mode,"
                " tokens_used, context_peak_pct, context_at_close, duration_min, commits,"
                " todos_closed, is_incomplete) VALUES (?, ?, ?, 'work', 'prod', 10000, ?, ?,"
                " 60, 0, ?, false)",
                [f"/crafted/{sid}.md", f"sess-{sid}", started, peak, close, todos])
    finally:
        con.close()
    return path


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return _crafted_db(tmp_path_factory.mktemp("tuning") / "crafted.duckdb")


def test_session_outcomes_labels(db):
    labels = tuning.outcomes(db).set_index("sess_id")
    assert labels["is_bad"].to_dict() == {
        "sess-S1": True, "sess-S2": False, "sess-S3": True, "sess-S4": False,
        "sess-S5": True, "sess-S6": True, "sess-S7": None}
    assert labels.loc["sess-S6", "bad_reason"] == "saturated"
    assert labels.loc["sess-S1", "bad_reason"] == "next-unhealthy"
    assert labels.loc["sess-S1", "next_sess_id"] == "sess-S2"
    assert labels.loc["sess-S1", "next_health_score"] == 0
    assert labels["iso_week"].tolist() == ["2026-W02"] * 4 + ["2026-W03"] * 3


def test_outcomes_health_cut_is_a_parameter(db):
    # with bad_health 0 nothing is "next-unhealthy": only the saturated S6 stays bad
    labels = tuning.outcomes(db, bad_health=0.0).set_index("sess_id")
    assert labels["is_bad"].sum() == 1 and labels.loc["sess-S6", "is_bad"]


def test_evaluate_conserve_close_default(db):
    # closes > 60: S1, S3 bad, S6 good; S5 bad and missed
    got = tuning.evaluate(db, Thresholds(), alert_on=CONSERVE)
    assert got["weeks"] == 2 and got["alerts"] == 3 and got["alerts_per_week"] == 1.5
    assert (got["true_positives"], got["false_positives"], got["false_negatives"]) == (2, 1, 1)
    assert got["precision"] == pytest.approx(2 / 3) and got["recall"] == pytest.approx(2 / 3)


def test_coach_health_each_of_last_three(db):
    # coach_health 11: every session with 3 scored predecessors triggers (S4..S7);
    # S5 bad, S4 and S6 good, S7 unlabelled -> precision 1/3, recall 1/3
    got = tuning.evaluate(db, Thresholds(coach_health=11.0), alert_on=("coach_triggered",))
    assert got["alerts"] == 4 and got["true_positives"] == 1 and got["false_positives"] == 2
    assert got["precision"] == pytest.approx(1 / 3) and got["recall"] == pytest.approx(1 / 3)


def test_coach_health_last_one(db):
    # coach_last_n 1: triggers after each health-0 session: S3, S5, S7
    got = tuning.evaluate(db, Thresholds(coach_last_n=1), alert_on=("coach_triggered",))
    assert got["alerts"] == 3 and got["true_positives"] == 2 and got["false_positives"] == 0
    assert got["precision"] == 1.0 and got["recall"] == pytest.approx(2 / 3)


@pytest.fixture(scope="module")
def conserve_sweep(db):
    return tuning.sweep(db, {"conserve_close": [60, 50, 35, 25, 10, 90]}, alert_on=CONSERVE)


def test_sweep_hand_computed(conserve_sweep):
    got = conserve_sweep.set_index("conserve_close")
    assert got["alerts"].to_dict() == {60: 3, 50: 4, 35: 5, 25: 6, 10: 7, 90: 0}
    assert got["alerts_per_week"].to_dict() == {60: 1.5, 50: 2.0, 35: 2.5, 25: 3.0, 10: 3.5,
                                                90: 0.0}
    assert got.loc[50, "precision"] == 0.5 and got.loc[50, "recall"] == pytest.approx(2 / 3)
    assert got.loc[35, "precision"] == 0.6 and got.loc[35, "recall"] == 1.0
    assert got.loc[25, "precision"] == pytest.approx(3 / 6)
    # S7 (unlabelled) alerts at 10 but counts in neither precision nor recall
    assert got.loc[10, "labelled_alerts"] == 6 and got.loc[10, "precision"] == pytest.approx(3 / 6)
    assert math.isnan(got.loc[90, "precision"]) and got.loc[90, "recall"] == 0.0


def test_sweep_product_and_columns(db):
    result = tuning.sweep(db, {"conserve_close": [50, 60], "coach_last_n": [1, 3]},
                          alert_on=CONSERVE)
    assert len(result) == 4
    assert list(result.columns[:2]) == ["conserve_close", "coach_last_n"]
    assert set(tuning.METRIC_COLUMNS) <= set(result.columns)
    # coach_last_n does not change the conserve alert: same figures for both values
    by_close = result.groupby("conserve_close")["alerts"].nunique()
    assert (by_close == 1).all()


def test_a_sweep_opens_the_store_once_and_leaves_a_lent_reader_open(db, monkeypatch):
    from brainlab.store import connection

    opened = []
    real = connection.connect

    def counted(config):
        opened.append(config.path)
        return real(config)

    monkeypatch.setattr(connection, "connect", counted)
    grid = {"conserve_close": [60, 50, 35], "coach_last_n": [1, 3]}  # 6 sets, 6 queries
    by_path = tuning.sweep(db, grid, alert_on=CONSERVE)
    assert len(opened) == 1  # one connection for the labels and every set's signals
    with connection.HeldReader(db) as lent:
        by_reader = tuning.sweep(lent, grid, alert_on=CONSERVE)
        assert lent.connection().execute("SELECT 1").fetchone() == (1,)  # still open
    assert len(opened) == 2
    assert by_reader.equals(by_path)


@pytest.mark.parametrize(("budget", "expected_close"), [
    (2.0, 60),   # 60 and 50 both recall 2/3; 60 has precision 2/3 > 0.5
    (2.5, 35),   # recall 1.0 first
    (3.5, 35),   # 35, 25, 10 all recall 1.0; 35 has the best precision 0.6
    (0.5, 90),   # only the silent set fits
])
def test_recommend(conserve_sweep, budget, expected_close):
    assert tuning.recommend(conserve_sweep, budget)["conserve_close"] == expected_close


def test_recommend_over_budget_raises(conserve_sweep):
    with pytest.raises(SimulationError, match="no threshold set"):
        tuning.recommend(conserve_sweep, -1)


def test_recommend_tie_keeps_grid_order(db):
    result = tuning.sweep(db, {"conserve_close": [70, 66]}, alert_on=CONSERVE)
    # both alert S3, S6 only (closes 75, 85): identical rows, the first one wins
    assert result["alerts"].tolist() == [2, 2]
    assert tuning.recommend(result, 5)["conserve_close"] == 70


def test_weeks_spanned_include_empty_weeks(tmp_path):
    late = [*SESSIONS[:6], ("S7", datetime(2026, 1, 28, 9), 1, 10, 20)]  # W05: W04 is empty
    path = _crafted_db(tmp_path / "gap.duckdb", late)
    got = tuning.evaluate(path, Thresholds(), alert_on=CONSERVE)
    assert got["weeks"] == 4 and got["alerts_per_week"] == 0.75


def test_weekly_alerts(db):
    weekly = tuning.weekly_alerts(db, Thresholds(conserve_close=50), alert_on=CONSERVE)
    assert weekly["iso_week"].tolist() == ["2026-W02", "2026-W03"]
    assert weekly["alerts"].tolist() == [3, 1]  # S1, S3, S4 | S6
    assert weekly["bad_sessions"].tolist() == [2, 1]
    assert weekly["true_positives"].tolist() == [2, 0]
    assert weekly["recommend_conserve_next"].tolist() == [3, 1]


def test_grid_validation(db):
    with pytest.raises(ConfigError, match="unknown threshold"):
        tuning.sweep(db, {"nope": [1]})
    with pytest.raises(ConfigError, match="do not change the session signals"):
        tuning.sweep(db, {"stale_ratio_max": [0.3]})
    with pytest.raises(ConfigError, match="alert_on"):
        tuning.sweep(db, {"conserve_close": [60]}, alert_on=("bogus",))


def test_breath_alert_flags_spec_defaults():
    # SPEC §4.4: context_load > 2.0 overload, stale_ratio > 30 % noise, exhale_rate < 50 %
    assert tuning.breath_alert_flags(2.5, 0.3, 0.5) == {
        "overload": True, "noise": False, "retention": False}
    assert tuning.breath_alert_flags(2.0, 0.31, 0.49) == {
        "overload": False, "noise": True, "retention": True}
    assert tuning.breath_alert_flags(None, None, None) == {
        "overload": False, "noise": False, "retention": False}
    tight = Thresholds(context_load_max=1.5)
    assert tuning.breath_alert_flags(1.8, 0, 1, tight)["overload"]


def test_sweep_kind_sessions_refuses_other_options(db):
    with pytest.raises(ConfigError, match="unexpected options"):
        tuning.sweep(db, {"conserve_close": [60]}, alert_on=CONSERVE, draws=5)
