"""Issue 41 checks: every replay command on every store shape says what it can replay and what
is missing (the template brain, an empty store, transcripts only); the regulator's --json."""

from __future__ import annotations

import json
from datetime import date

import pytest
from click.testing import CliRunner

from brainlab.cli import main
from brainlab.sim.regulator import METRICS


def simulate(*args):
    return CliRunner().invoke(main, ["simulate", *map(str, args)])


def error_line(res) -> str:
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    return lines[0]


@pytest.mark.parametrize("shape", ["empty_store", "template_store"])
def test_a_store_without_sprints_or_journals_names_the_command(shape, request):
    db = request.getfixturevalue(shape)
    assert "run `brainlab ingest sprints" in error_line(simulate("broker", "--db", db))
    assert "run `brainlab ingest circuits" in error_line(
        simulate("regulator", "--db", db, "--draws", 10))


def test_transcripts_only_store_says_what_the_broker_can_replay(corpus_store):
    line = error_line(simulate("broker", "--db", corpus_store))
    # nothing with a declared contract: says how many sprints were skipped and why, and how
    # to replay the ones with an inferred contract
    assert "replayed; skipped:" in line and "--contracts inferred" in line
    assert "projets/<project>.md" in line
    res = simulate("broker", "--db", corpus_store, "--contracts", "inferred", "--draws", 50,
                   "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["replayed"] > 0 and report["contracts"]["declared"] == 0
    assert report["replayed"] + sum(report["skipped"].values()) == report["total"]
    assert report["backtest"] == []  # no broker printed anything: nothing to check against
    assert "run `brainlab ingest circuits" in error_line(
        simulate("regulator", "--db", corpus_store, "--draws", 10))


def test_simulate_regulator_json_on_the_demo(demo):
    res = simulate("regulator", "--db", demo["db"], "--rules", "max_relance_same_stop=2",
                   "--rules", "max_relance_same_stop=3", "--draws", 200, "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    for key in ("rule_sets", "total", "replayed", "skipped", "backtest", "change_check"):
        assert key in report
    assert report["replayed"] + sum(report["skipped"].values()) == report["total"]
    rows = {r["rules"]: r for r in report["rule_sets"]}
    assert list(rows)[0] == "default"  # the recorded rules: the baseline, always replayed
    for row in rows.values():
        assert isinstance(row["distinguishable_from_recorded"], bool)
        assert all(len(row[m]) == 3 for m in METRICS)
    # the SPEC default written out is the same rules: indistinguishable (null)
    same = rows["max_relance_same_stop=3"]
    assert not same["distinguishable_from_recorded"]
    assert all(d == [0.0, 0.0, 0.0] for d in same["difference_from_recorded"].values())
    assert all(r["covered"] for r in report["backtest"])
    planted = demo["planted"]["regulator rules change"]
    change = report["change"]
    assert change["to"] == planted["to"] and change["found"]
    # the first ticket started under the new rules: on or a few days after the planted day
    assert 0 <= (date.fromisoformat(change["day"]) - date.fromisoformat(planted["day"])).days < 7
    assert {"figure", "predicted", "actual", "covered"} <= set(report["change_check"][0])
