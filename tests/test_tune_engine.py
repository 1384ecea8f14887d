"""The tuning engine (brainlab.sim.tuning.engine, judge) on hand-made units: intervals, split,
a planted threshold found, and random labels that leave the defaults in place."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from brainlab.sim.tuning import engine, judge


def test_wilson_matches_the_textbook_values():
    low, high = engine.wilson(6, 39)  # the demo's old 6 true positives of 39 alerts
    assert (low, high) == (pytest.approx(0.0725, abs=1e-4), pytest.approx(0.2973, abs=1e-4))
    assert engine.wilson(0, 10)[0] == 0.0 and engine.wilson(10, 10)[1] == pytest.approx(1.0)
    assert all(math.isnan(v) for v in engine.wilson(0, 0))


def test_split_selects_before_it_confirms():
    weeks = [f"W{i:02d}" for i in range(12)]
    split = engine.split_weeks(weeks)
    assert split.selection == 6 and split.confirm == 6
    assert split.folds() == [2, 3, 4, 5]  # pick on weeks [0, k), judge on week k
    assert engine.split_weeks(weeks[:3]) is None  # 2 to select + 2 to confirm at least
    assert engine.split_weeks(weeks[:4]).selection == 2


def _units(seed: int, weeks: int = 16, per_week: int = 20):
    rng = np.random.default_rng(seed)
    n = weeks * per_week
    week_of = np.repeat(np.arange(weeks), per_week)
    level = rng.uniform(0, 100, n)  # one figure per unit; a threshold on it alerts
    return rng, week_of, level


def _alert_for(level):
    def alert_for(changes):
        return level > changes.get("cut", 60.0)
    return alert_for


GRID = {"cut": [30.0, 35.0, 40.0, 45.0, 50.0, 55.0, 60.0, 65.0, 70.0],
        "inert": [1.0, 2.0, 3.0]}


def _judge(week_of, is_bad, level, budget=100.0):
    weeks = [f"2026-W{w + 1:02d}" for w in range(int(week_of.max()) + 1)]
    alert_for = _alert_for(level)
    return judge.judge_alerts(
        target="test", unit="units", label={"definition": "test"}, weeks=weeks,
        week_of=week_of, is_bad=is_bad, alert_for=alert_for, grid=GRID,
        current={"cut": 60.0, "inert": 2.0}, budget=budget, table="thresholds")


def test_planted_cut_is_found_and_inert_threshold_has_no_effect():
    rng, week_of, level = _units(1)
    is_bad = (level > 45).astype(float)
    flip = rng.random(len(level)) < 0.05  # a little noise
    is_bad[flip] = 1 - is_bad[flip]
    result = _judge(week_of, is_bad, level)
    assert result["recommended"] == {"cut": 45.0}
    assert result["no_effect"] == ["inert"]
    assert result["informative"] is True
    chosen = next(c for c in result["candidates"] if c["changes"] == {"cut": 45.0})
    assert chosen["difference"]["informedness"][1] > 0
    value, low, high = result["base_rate"]
    assert low < value < high


def test_budget_keeps_the_defaults_when_the_better_cut_alerts_too_often():
    _rng, week_of, level = _units(2)
    result = _judge(week_of, (level > 45).astype(float), level, budget=5.0)
    assert result["recommended"] is None
    assert "keep the defaults" in result["reason"]


@pytest.mark.parametrize("seed", range(10))
def test_random_labels_keep_the_defaults_and_say_the_alerts_carry_nothing(seed):
    rng, week_of, level = _units(100 + seed)
    is_bad = (rng.random(len(level)) < 0.2).astype(float)
    result = _judge(week_of, is_bad, level)
    assert result["recommended"] is None, result["reason"]
    assert result["reason"].startswith("keep the defaults")


def test_uninformative_alerts_are_called_so():
    rng, week_of, level = _units(7)
    is_bad = (rng.random(len(level)) < 0.3).astype(float)
    result = _judge(week_of, is_bad, level)
    lift = result["defaults"]["lift"]
    if lift[1] <= 1 <= lift[2]:
        assert result["informative"] is False
        assert any("carry no information about the label" in n for n in result["notes"])


def test_ties_take_the_value_nearest_the_current_one():
    _rng, week_of, level = _units(3)
    level = np.round(level / 10) * 10  # values on a 10 grid: cut 40 and 45 alert alike
    result = _judge(week_of, (level > 45).astype(float), level)
    tied = next(c for c in result["candidates"] if 45.0 in c["same_alerts_for"])
    assert tied["same_alerts_for"] == [40.0, 45.0] and tied["value"] == 45.0
    assert result["sweep"]["identical_rows"] >= 1 + 3  # the tie, and every inert value


def _tickets(seed: int, weeks: int = 12, per_week: int = 8):
    import pandas as pd

    rng = np.random.default_rng(seed)
    n = weeks * per_week
    frame = pd.DataFrame({
        "ticket": [f"T-{i}" for i in range(n)],
        "outcome": rng.choice(["integrated", "escalated", "ended"], n, p=[0.8, 0.15, 0.05]),
        "sessions": rng.poisson(8, n).astype(float), "tokens": rng.normal(3e5, 5e4, n),
        "wakeups": rng.poisson(0.3, n).astype(float)})
    return rng, frame, np.repeat(np.arange(weeks), per_week)


def _frontier(frames_of, week_of):
    from brainlab.sim.tuning import frontier

    weeks = [f"2026-W{w + 1:02d}" for w in range(int(week_of.max()) + 1)]
    grid = {"limit": [1, 2, 3, 4], "switch": [True, False]}
    return frontier.judge_frontier(
        label={"definition": "test"}, weeks=weeks, week_of=week_of,
        replayed=lambda tried: [frames_of(changes) for changes in tried], grid=grid,
        current={"limit": 3, "switch": True}, budget=100.0)


def test_frontier_recommends_a_rule_set_that_saves_sessions_and_nothing_else():
    _rng, base, week_of = _tickets(5)
    cheaper = base.assign(sessions=base["sessions"] * 0.6, tokens=base["tokens"] * 0.6)

    def frames_of(changes):
        return cheaper if changes.get("limit") == 2 else base

    result = _frontier(frames_of, week_of)
    assert result["recommended"] == {"limit": 2}
    assert "sessions_per_integrated" in result["reason"]
    assert result["no_effect"] == ["switch"]
    assert "precision" not in result["defaults"]


@pytest.mark.parametrize("seed", range(5))
def test_frontier_keeps_the_defaults_when_rule_sets_only_reshuffle_noise(seed):
    rng, base, week_of = _tickets(20 + seed)

    def frames_of(changes):
        if not changes:
            return base
        # the same tickets, each one's figures drawn again: no rule set is really better
        local = np.random.default_rng(zlib.crc32(repr(changes).encode()) + seed)
        redrawn = base.sample(frac=1.0, random_state=local.integers(1 << 31)).reset_index(
            drop=True)
        return redrawn.assign(ticket=base["ticket"])

    result = _frontier(frames_of, week_of)
    assert result["recommended"] is None, result["reason"]
