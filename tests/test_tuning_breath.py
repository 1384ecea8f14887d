"""Breath-alert tuning (brainlab.sim.tuning_breath) on crafted sprints, answers by hand.

One project, one agent per sprint, domain core, replayed under the ``recorded`` policy (what
the broker loaded). Expire (SPEC §4.3): a loaded file is kept when it was referenced and the
domain has open TODOs, else released. SPEC §4.4 per sprint:

    sprint  week      referenced  loaded  todos  load  stale  exhale  depth
    s1      2026-W02  a b         a       -      0.5   0      1       0
    s2      2026-W02  a           a b c   core   3.0   2/3    2/3     1     overload, noise
    s3      2026-W03  a b         a b     core   1.0   0      0       2     retention
    s4      2026-W03  a b c       a b c   core   1.0   0      0       3     retention

Depth rises at s2, s3, s4: with breath_depth_rising_sprints = 3 (two rises in a row) the
accumulation alert fires at s3 and s4; with 2 at s2, s3, s4; with 4 at s4; with 5 never.
"""

from __future__ import annotations

import pytest

from brainlab.common.errors import ConfigError
from brainlab.sim import broker, tuning
from brainlab.sim.tuning import breath as tuning_breath
from brainlab.spec.thresholds import Thresholds


def record(name, day, refs, loaded, todos):
    return {"sprint": name, "project": "p", "domain": "core", "agent": "developer",
            "referenced": [f"src/core/{f}.py" for f in refs],
            "loaded": [f"src/core/{f}.py" for f in loaded], "open_todos": todos,
            "started_at": f"2026-01-{day:02d}T10:00", "ended_at": f"2026-01-{day:02d}T11:00"}


@pytest.fixture(scope="module")
def sprints():
    return broker.sprints_from_records([
        record("s1", 5, "ab", "a", []), record("s2", 7, "a", "abc", ["core"]),
        record("s3", 12, "ab", "ab", ["core"]), record("s4", 14, "abc", "abc", ["core"])])


def test_sprint_alerts_spec_defaults(sprints):
    got = tuning_breath.sprint_alerts(sprints).set_index("sprint_id")
    assert got["iso_week"].tolist() == ["2026-W02", "2026-W02", "2026-W03", "2026-W03"]
    assert got["alert_overload"].tolist() == [False, True, False, False]
    assert got["alert_noise"].tolist() == [False, True, False, False]
    assert got["alert_retention"].tolist() == [False, False, True, True]
    assert got["alert_accumulation"].tolist() == [False, False, True, True]
    assert got["is_alert"].tolist() == [False, True, True, True]


@pytest.mark.parametrize(("rising", "expected"), [
    (2, [False, True, True, True]), (3, [False, False, True, True]),
    (4, [False, False, False, True]), (5, [False, False, False, False])])
def test_accumulation_threshold_is_the_number_of_sprints(sprints, rising, expected):
    got = tuning_breath.sprint_alerts(sprints, Thresholds(breath_depth_rising_sprints=rising))
    assert got["alert_accumulation"].tolist() == expected


def test_evaluate_and_weekly(sprints):
    got = tuning_breath.evaluate(sprints)
    assert (got["weeks"], got["sprints"], got["alerts"], got["alerts_per_week"]) == (2, 4, 3, 1.5)
    assert got["alert_overload_per_week"] == 0.5 and got["alert_noise_per_week"] == 0.5
    assert got["alert_retention_per_week"] == 1.0 and got["alert_accumulation_per_week"] == 1.0
    weekly = tuning_breath.weekly_alerts(sprints)
    assert weekly["iso_week"].tolist() == ["2026-W02", "2026-W03"]
    assert weekly["sprints"].tolist() == [2, 2] and weekly["alerts"].tolist() == [1, 2]
    assert weekly["alert_overload"].tolist() == [1, 0]
    assert weekly["alert_accumulation"].tolist() == [0, 2]
    # a load of exactly 3.0 is not over a 3.0 limit (SPEC §4.4 "> 2.0" read as strict)
    loose = tuning_breath.evaluate(sprints, Thresholds(context_load_max=3.0))
    assert loose["alert_overload_per_week"] == 0.0


def test_breath_sweep(sprints):
    result = tuning.sweep(sprints, {"breath_depth_rising_sprints": [3, 5],
                                    "exhale_rate_min": [0.5, 0.0]}, kind="breath")
    got = result.set_index(["breath_depth_rising_sprints", "exhale_rate_min"])
    # (5, 0.0): no retention, no accumulation: only s2 (overload, noise) alerts
    assert got["alerts"].to_dict() == {(3, 0.5): 3, (3, 0.0): 3, (5, 0.5): 3, (5, 0.0): 1}
    assert got.loc[(5, 0.0), "alerts_per_week"] == 0.5
    assert list(result.columns[2:]) == tuning_breath.BREATH_METRIC_COLUMNS
    with pytest.raises(ConfigError, match="no outcome labels"):
        tuning.recommend(result, 5)
    with pytest.raises(ConfigError, match="breath thresholds"):
        tuning.sweep(sprints, {"conserve_close": [60]}, kind="breath")


def test_load_without_sprints_is_none(tmp_path):
    from brainlab.store import open_writer

    open_writer(tmp_path / "empty.duckdb").close()
    assert tuning_breath.load(tmp_path / "empty.duckdb") is None


def test_overload_fires_when_a_sprint_loads_files_and_references_none():
    """SPEC §4.4: context_load = loaded / referenced is infinite here; it used to read as 0."""
    ss = broker.sprints_from_records([
        record("blind", 5, "", "ab", []), record("near", 7, "a", "ab", [])])
    got = tuning_breath.sprint_alerts(ss).set_index("sprint_id")
    assert got.loc["blind", "alert_overload"]
    assert not got.loc["near", "alert_overload"]  # 2 / 1 = 2.0 is not > 2.0
    agents = broker.replay(ss, ["recorded"]).rows.set_index("sprint_id")
    assert agents.loc["blind", "alert_overload"]


def test_each_threshold_set_is_replayed_once_per_sprint_set(sprints, monkeypatch):
    """Notebook 04's breath cells (issue 44 speed): the panel, the sweep, the baseline and the
    tune given the sprints replay each threshold set once; every figure as a fresh replay."""
    fresh = broker.sprints_from_records([  # the same records: nothing replayed for it yet
        record("s1", 5, "ab", "a", []), record("s2", 7, "a", "abc", ["core"]),
        record("s3", 12, "ab", "ab", ["core"]), record("s4", 14, "abc", "abc", ["core"])])
    replayed = []
    real = broker.replay

    def counting(ss, policies, **kwargs):
        replayed.append(kwargs.get("thresholds"))
        return real(ss, policies, **kwargs)

    monkeypatch.setattr(broker, "replay", counting)
    spec = Thresholds()
    scored = tuning_breath.evaluate(fresh, spec)  # the panel: score and weekly chart
    weekly = tuning_breath.weekly_alerts(fresh, spec)
    by_run = tuning.sweep(fresh, {"breath_depth_rising_sprints": [2, 3, 4, 5]}, kind="breath")
    assert tuning_breath.evaluate(fresh, spec) == scored
    assert replayed.count(spec) == 1
    assert len(replayed) == 4  # the defaults, then rising 2, 4 and 5
    result = tuning_breath.tune("no store is read", spec, sprints=fresh)
    assert replayed.count(spec) == 1  # the tune's baseline: no replay
    # the same answers as the uncached replays of the other SprintSet
    monkeypatch.setattr(broker, "replay", real)
    assert weekly.equals(tuning_breath.weekly_alerts(sprints, spec))
    assert by_run.equals(tuning.sweep(sprints, {"breath_depth_rising_sprints": [2, 3, 4, 5]},
                                      kind="breath"))
    assert result == tuning_breath.tune(sprints)


def test_a_kept_replay_is_not_changed_by_its_caller(sprints):
    first = tuning_breath.sprint_alerts(sprints)
    first["is_alert"] = False
    first.loc[first.index[0], "sprint_id"] = "changed"
    again = tuning_breath.sprint_alerts(sprints)
    assert again["is_alert"].any() and "changed" not in set(again["sprint_id"])
