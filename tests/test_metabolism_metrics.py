"""SPEC §3.2 health score and §3.3 signals, computed by the SQL views on crafted sessions."""

from datetime import datetime, timedelta

import pandas as pd
import pytest
from conftest import ingest_brain, write

from brainlab import metrics
from brainlab.spec.thresholds import Thresholds
from brainlab.store import query


def log(brain, when: datetime, slug: str, **fields) -> str:
    sess_id = f"sess-{when:%Y%m%d-%H%M}-{slug}"
    rows = "\n".join(f"| {k} | {v} |" for k, v in fields.items())
    write(brain, f"progression/metabolism/{when:%Y-%m-%d}-{sess_id}.md",
          f"# Metabolism — {when:%Y-%m-%d} — {sess_id}\n\n| Clé | Valeur |\n|---|---|\n{rows}\n")
    return sess_id


def productive(brain, when, slug="work", **over):
    fields = dict(type="work", tokens_used="45k", context_peak="31%", context_at_close="20%",
                  duration_min=60, commits=3, todos_closed=2)
    fields.update(over)
    return log(brain, when, slug, **fields)


def test_worked_examples(brain, db):
    """SPEC §3.2: 35/13.95 = 2.51; todos=0, commits=0, 80k, 87% gives 0 and saturation."""
    t0 = datetime(2026, 3, 15, 11, 5)
    a = productive(brain, t0, health_score="2.51")
    b = productive(brain, t0 + timedelta(hours=3), tokens_used="80k", context_peak="87%",
                   commits=0, todos_closed=0)
    ingest_brain(brain, db)
    s = metrics.sessions(db).set_index("sess_id")
    assert round(s.loc[a, "health_score_v1"], 2) == 2.51
    assert round(s.loc[a, "health_score"], 2) == 2.51 and s.loc[a, "health_basis"] == "recomputed-v2"
    assert not s.loc[a, "is_health_disputed"]
    assert s.loc[b, "health_score"] == 0 and bool(s.loc[b, "saturation_flag"]) is True
    assert not bool(s.loc[a, "saturation_flag"])


def test_v2_by_category_and_v1_selectable(brain, db):
    t0 = datetime(2026, 3, 1, 9, 0)
    build = log(brain, t0, "kernel", type="kernel", tokens_used="100k", context_peak="50%",
                context_at_close="30%", duration_min=60, commits=0, todos_closed=0,
                kernel_files_touched=2, adrs_written=1)
    explore = log(brain, t0 + timedelta(hours=2), "navigate", type="navigate", tokens_used="20k",
                  context_peak="25%", context_at_close="10%", duration_min=120, commits=0,
                  insights_captured=3)
    unknown_inputs = log(brain, t0 + timedelta(hours=5), "brain", type="brain",
                         tokens_used="40k", context_peak="90%", context_at_close="50%",
                         duration_min=60, commits=1, health_score="1.5")
    ingest_brain(brain, db)
    v2 = metrics.sessions(db).set_index("sess_id")
    # build-brain: (2*15 + 1*20) / (100 * 0.5) = 1.0 ; explore: (3*8 + 120*0.1) / max(1, 5) = 7.2
    assert v2.loc[build, "health_score"] == pytest.approx(1.0)
    assert v2.loc[explore, "health_score"] == pytest.approx(7.2)
    # build-brain without kernel_files_touched: v2 unknown -> the logged score is used
    assert pd.isna(v2.loc[unknown_inputs, "health_score_v2"])
    assert v2.loc[unknown_inputs, "health_score"] == 1.5
    assert v2.loc[unknown_inputs, "health_basis"] == "logged"
    v1 = metrics.sessions(db, formula="v1").set_index("sess_id")
    # v1 for the build session: (0*10 + 0*5)/50 = 0 ; for the third: 5 / 36
    assert v1.loc[build, "health_score"] == 0
    assert v1.loc[unknown_inputs, "health_score"] == pytest.approx(5 / 36)
    assert bool(v1.loc[build, "saturation_flag"]) is False  # peak 50 <= 80


def test_saturation_by_profile(brain, db):
    t0 = datetime(2026, 3, 1, 9, 0)
    use = productive(brain, t0, todos_closed=0, context_peak="81%")
    build = log(brain, t0 + timedelta(hours=1), "brain", type="brain", tokens_used="50k",
                context_peak="86%", context_at_close="40%", duration_min=60, commits=1,
                kernel_files_touched=0, adrs_written=0)
    build_ok = log(brain, t0 + timedelta(hours=2), "brain", type="brain", tokens_used="50k",
                   context_peak="84%", context_at_close="40%", duration_min=60, commits=1,
                   kernel_files_touched=0, adrs_written=0)
    explore = log(brain, t0 + timedelta(hours=3), "explore", type="explore", tokens_used="50k",
                  context_peak="99%", context_at_close="40%", duration_min=60, commits=0,
                  insights_captured=0)
    ingest_brain(brain, db)
    s = metrics.sessions(db).set_index("sess_id").saturation_flag.astype(bool)
    assert s[use] and s[build] and not s[build_ok] and not s[explore]
    raised = metrics.sessions(db, thresholds=Thresholds(saturation_peak_use=90))
    assert not raised.set_index("sess_id").saturation_flag.astype(bool)[use]


def test_ratio_window_days_and_sessions(brain, db):
    """ratio = n_use / (n_build + 0.5 n_explore) over 7 calendar days, or the last N sessions."""
    t0 = datetime(2026, 4, 1, 9, 0)
    productive(brain, t0, "work")                                      # day 0: use
    log(brain, t0 + timedelta(days=1, hours=1), "brain", type="brain", tokens_used="10k",
        context_peak="10%", context_at_close="5%", duration_min=30, commits=0)
    log(brain, t0 + timedelta(days=2), "explore", type="explore", tokens_used="10k",
        context_peak="10%", context_at_close="5%", duration_min=30, commits=0)
    last = productive(brain, t0 + timedelta(days=8), "work")          # day 8: day 0 left window
    ingest_brain(brain, db)
    by_days = metrics.ratio(db).set_index("sess_id")
    # window (day 8 - 7x24h, day 8]: use 1, build 1 (day 1 +1h), explore 1 -> 1 / 1.5
    assert by_days.loc[last, "ratio"] == pytest.approx(1 / 1.5)
    assert by_days.loc[last, "ratio_band"] == "watch"
    by_rows = metrics.ratio(db, Thresholds(ratio_window=4, ratio_window_unit="sessions"))
    # last 4 sessions: use 2, build 1, explore 1 -> 2 / 1.5
    assert by_rows.set_index("sess_id").loc[last, "ratio"] == pytest.approx(2 / 1.5)


def test_coach_trigger_ratio_and_health(brain, db):
    t0 = datetime(2026, 5, 1, 9, 0)
    ids = [log(brain, t0 + timedelta(hours=i), "brain", type="brain", tokens_used="10k",
               context_peak="10%", context_at_close="5%", duration_min=30, commits=0,
               kernel_files_touched=1, adrs_written=0) for i in range(3)]
    # health of each build session: 15 / max(1, 1) = 15 (healthy), but ratio 0 -> coach
    ingest_brain(brain, db)
    sig = metrics.signals(db).set_index("sess_id")
    assert not sig.loc[ids[0], "coach_triggered"]  # nothing before the first boot
    assert sig.loc[ids[1], "coach_triggered"] and sig.loc[ids[1], "coach_reason"] == "ratio"
    assert sig.loc[ids[2], "is_narcissistic"]


def test_coach_trigger_health_each_vs_mean(brain, db):
    t0 = datetime(2026, 5, 1, 9, 0)
    # health = (todos*10 + commits*5) / (tokens_k * peak/100); tokens 100k, peak 100% -> /100
    healths = {0: (0, 1), 1: (0, 1), 2: (0, 30)}  # 0.05, 0.05, 1.5
    ids = [productive(brain, t0 + timedelta(hours=i), tokens_used="100k", context_peak="100%",
                      todos_closed=t, commits=c) for i, (t, c) in healths.items()]
    nxt = productive(brain, t0 + timedelta(hours=5))
    ingest_brain(brain, db)
    each = metrics.signals(db).set_index("sess_id")
    assert not each.loc[nxt, "coach_triggered"]  # 1.5 is not < 0.8: not "each" below
    mean = metrics.signals(db, Thresholds(coach_health_mode="mean")).set_index("sess_id")
    # mean (0.05 + 0.05 + 1.5) / 3 = 0.533 < 0.8
    assert mean.loc[nxt, "coach_triggered"] and mean.loc[nxt, "coach_reason"] == "health"
    assert ids


def test_conserve_signals(brain, db):
    t0 = datetime(2026, 6, 1, 9, 0)
    inefficient = productive(brain, t0, context_peak="75%", tokens_used="100k", commits=1,
                             todos_closed=0)  # 5 / 75 < 1.0
    closing_high = productive(brain, t0 + timedelta(hours=2), context_at_close="61%")
    ingest_brain(brain, db)
    sig = metrics.signals(db).set_index("sess_id")
    assert sig.loc[inefficient, "is_inefficient"]
    assert not sig.loc[closing_high, "is_inefficient"]
    assert sig.loc[closing_high, "recommend_conserve_next"]
    assert not sig.loc[inefficient, "recommend_conserve_next"]


def test_cold_start_pass_rate(brain, db):
    t0 = datetime(2026, 7, 1, 9, 0)
    passes = [True, True, False, True, False, True, True, True, False]
    for i, ok in enumerate(passes):
        productive(brain, t0 + timedelta(hours=i), handoff_level="NO",
                   cold_start_kpi_pass=str(ok).lower())
    productive(brain, t0 + timedelta(hours=20), handoff_level="FULL", cold_start_kpi_pass="N/A")
    ingest_brain(brain, db)
    kpi = metrics.cold_start(db)
    assert len(kpi) == 9
    last = kpi.iloc[-1]
    # last 7 measured = passes[2:] = F,T,F,T,T,T,F -> 4 / 7 = 0.571 < 0.60
    assert last.measured == 7 and last.passes == 4
    assert last.pass_rate == pytest.approx(4 / 7) and last.status == "enrich-constitution"
    # window 3 ending at passes[8]: T,T,F -> 0.667: watch
    small = query(db, "SELECT * FROM cold_start_kpi_for(window_size := 3) ORDER BY started_at")
    assert small.pass_rate.iloc[-1] == pytest.approx(2 / 3) and small.status.iloc[-1] == "watch"
