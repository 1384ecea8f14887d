"""`brainlab tune sessions` (issue 42): a planted threshold found on held-out weeks, a null store
where the defaults stand, the JSON contract, and what `--write` does to a settings file.

The planted brain (synth plant ``unhealthy-after-close``, off in the demo): a session closing
above 45 % of the window is followed by an unhealthy session (SPEC §3.3 conserve_close, SPEC
default 60). The null stores: each log's figures moved as one block to another session of
the same category (brainlab.sim.tuning.null), seeds 0 to 4 here;
benchmarks/bench_tuning_null.py measures the rate over 50 seeds.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import built_once, cli_env

from brainlab.sim.tuning import null, sessions
from brainlab.synth import SynthOptions, synthesize
from brainlab.synth.tuning_plants import CLOSE_CUT

BRAINLAB = str(Path(sys.executable).with_name("brainlab"))
JSON_KEYS = {"label", "split", "defaults", "candidates", "recommended", "reason", "no_effect",
             "base_rate"}
TRIPLES = ("precision", "recall", "lift", "alerts_per_week")


def _logs_store(folder: Path, weeks: int, seed: int, plants: tuple[str, ...]) -> None:
    from brainlab.store.ingest import ingest_brain

    synthesize(folder / "brain", SynthOptions(weeks=weeks, seed=seed, plants=plants))
    ingest_brain(folder / "brainlab.duckdb", folder / "brain")


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    """16 weeks of logs (no transcripts) with the close threshold planted, built once a run."""
    return built_once(tmp_path_factory, "tune-planted", lambda f: _logs_store(
        f, 16, 11, ("unhealthy-after-close",))) / "brainlab.duckdb"


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Path:
    """12 weeks of logs with no plant: the base the null stores shuffle."""
    return built_once(tmp_path_factory, "tune-plain", lambda f: _logs_store(
        f, 12, 7, ())) / "brainlab.duckdb"


def tune_cli(*args: str, home: Path, cwd: Path | None = None):
    return subprocess.run([BRAINLAB, "tune", *args], capture_output=True, text=True,
                          env=cli_env(home), cwd=cwd or home, timeout=300)


@pytest.fixture(scope="module")
def planted_json(planted, tmp_path_factory) -> dict:
    """`tune sessions --db PLANTED --json --budget 10` (the console script, the SPEC defaults:
    no settings file), run once for the two tests reading its result: the JSON is the result
    of ``sessions.tune(planted, budget=10.0)`` (cli/tune.py), which the first test computed
    in-process again (docs/testing.md stop 27). Each test gets its own copy."""
    home = tmp_path_factory.mktemp("tune-json")
    done = tune_cli("sessions", "--db", str(planted), "--json", "--budget", "10", home=home)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_planted_threshold_is_recommended_within_the_grid_step(planted_json):
    result = copy.deepcopy(planted_json)
    assert result["recommended"] is not None, result["reason"]
    (name, value), = result["recommended"].items()
    assert name == "conserve_close"
    assert abs(value - CLOSE_CUT) <= 5  # the grid step of conserve_close
    chosen = next(c for c in result["candidates"] if c["changes"] == result["recommended"])
    assert chosen["difference"]["informedness"][1] > 0  # beats the defaults beyond its interval
    assert chosen["alerts_per_week"][0] <= 10.0
    # the planted signal carries information under the recommended threshold: its lift's
    # interval lies above 1 (the defaults' alerts may not: `informative` speaks of them)
    assert chosen["lift"][1] > 1
    assert result["reason"].startswith(f"set conserve_close = {value}")


def test_planted_recommendation_needs_the_budget(planted):
    """Under a budget the candidate exceeds, the defaults stand and the reason says why."""
    result = sessions.tune(planted, budget=1.0)
    assert result["recommended"] is None
    assert result["reason"].startswith("keep the defaults")


@pytest.mark.parametrize("seed", range(5))
def test_null_store_keeps_the_defaults(plain, tmp_path, seed):
    db = tmp_path / "null.duckdb"
    shutil.copy(plain, db)
    moved = null.shuffle_figures(db, seed)
    assert moved > 150
    result = sessions.tune(db, budget=100.0)  # no budget: only information can decide
    assert result["recommended"] is None, result["reason"]
    assert result["reason"].startswith("keep the defaults")


def test_null_shuffle_keeps_categories_and_moves_figures(plain, tmp_path):
    from brainlab.store import query

    db = tmp_path / "null.duckdb"
    shutil.copy(plain, db)
    sql = ("SELECT sess_id, type, context_at_close, todos_closed FROM raw_metabolism_logs "
           "ORDER BY source_file")
    before = query(plain, sql)
    null.shuffle_figures(db, 3)
    after = query(db, sql)
    assert after["type"].tolist() == before["type"].tolist()
    assert sorted(after["context_at_close"].fillna(-1)) == sorted(
        before["context_at_close"].fillna(-1))
    assert (after["context_at_close"] != before["context_at_close"]).mean() > 0.5


def test_json_contract_and_label(planted_json):
    result = copy.deepcopy(planted_json)
    assert JSON_KEYS <= set(result)
    label = result["label"]
    assert "next scored session" in label["definition"] and "§3.2" in label["definition"]
    assert label["bad"] + (label["labelled"] - label["bad"]) + label["unlabelled"] == \
        label["sessions"]
    assert "forward chaining" in result["split"]["method"]
    assert "never used for selection" in result["split"]["method"]
    for row in [result["defaults"], *result["candidates"]]:
        for name in TRIPLES:
            value, low, high = row[name]
            assert low <= value <= high, (name, row[name])
    for candidate in result["candidates"]:
        assert set(candidate["difference"]) >= set(TRIPLES)
    assert len(result["base_rate"]) == 3
    assert "ratio_healthy" in result["no_effect"]  # sets ratio_band only: changes no alert
    assert all(c["name"] != "ratio_healthy" for c in result["candidates"])
    assert result["recommended"] == {"conserve_close": pytest.approx(CLOSE_CUT, abs=5)}


COMMENTED = """\
# my brain's settings
timezone = "Europe/Paris"  # where I work

[paths]
db = "brainlab.duckdb"  # beside this file

[thresholds]
# the coach fires a little early for me
coach_ratio = 0.35  # was 0.40
conserve_close = 60.0  # SPEC default, keep?

[regulator]
max_reviews = 3
"""


def test_write_changes_the_file_and_keeps_comments_and_keys(planted, tmp_path):
    settings = tmp_path / "brainlab.toml"
    settings.write_text(COMMENTED, encoding="utf-8")
    dry = tune_cli("sessions", "--db", str(planted), "--budget", "10", "--write", "--dry-run",
                   home=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert "-conserve_close = 60.0" in dry.stdout and "dry run" in dry.stdout
    assert settings.read_text(encoding="utf-8") == COMMENTED  # --dry-run changes nothing
    done = tune_cli("sessions", "--db", str(planted), "--budget", "10", "--write",
                    home=tmp_path)
    assert done.returncode == 0, done.stderr
    text = settings.read_text(encoding="utf-8")
    assert text != COMMENTED
    data = tomllib.loads(text)
    assert abs(data["thresholds"]["conserve_close"] - CLOSE_CUT) <= 5
    assert data["thresholds"]["coach_ratio"] == 0.35
    assert data["paths"] == {"db": "brainlab.duckdb"} and data["regulator"] == {"max_reviews": 3}
    for line in COMMENTED.splitlines():  # every line but the changed one, as it was
        if not line.startswith("conserve_close"):
            assert line in text.splitlines()
    assert "conserve_close = " in text and "# SPEC default, keep?" in text
    # the settings now in force are the written ones: what every consumer loads, and the next
    # run's defaults
    from brainlab.settings import load_settings

    written = load_settings(settings)
    assert written.thresholds.conserve_close == data["thresholds"]["conserve_close"]
    assert written.thresholds.coach_ratio == 0.35 and written.rules.max_reviews == 3
    again = tune_cli("sessions", "--db", str(planted), "--budget", "10", "--json",
                     home=tmp_path)
    values = json.loads(again.stdout)["defaults"]["values"]
    assert values["conserve_close"] == data["thresholds"]["conserve_close"]
    assert values["coach_ratio"] == 0.35


def test_write_to_a_named_file_and_nothing_when_defaults_stand(planted, plain, tmp_path):
    target = tmp_path / "elsewhere.toml"
    done = tune_cli("sessions", "--db", str(planted), "--budget", "10", "--write", str(target),
                    home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert tomllib.loads(target.read_text())["thresholds"]["conserve_close"] in (40.0, 45.0,
                                                                              50.0)
    kept = tmp_path / "kept.toml"
    kept.write_text(COMMENTED)
    done = tune_cli("sessions", "--db", str(plain), "--budget", "0.1", "--write", str(kept),
                    home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "nothing written" in done.stdout
    assert kept.read_text() == COMMENTED


def test_empty_store_and_bad_input_say_what_to_do(empty_store, tmp_path):
    done = tune_cli("sessions", "--db", str(empty_store), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "keep the defaults" in done.stdout and "brainlab ingest brain" in done.stdout
    missing = tune_cli("sessions", "--db", str(tmp_path / "none.duckdb"), home=tmp_path)
    assert missing.returncode == 1 and missing.stderr.startswith("Error:")
    assert "Traceback" not in missing.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("[thresholds\n")
    broken = tune_cli("sessions", "--db", str(empty_store), "--write", str(bad), home=tmp_path)
    assert broken.returncode in (0, 1) and "Traceback" not in broken.stderr


PROBE = """import json, sys
from brainlab import metrics
from brainlab.lab import notebook_settings
t = notebook_settings().thresholds
flags = metrics.signals(sys.argv[1], t)["recommend_conserve_next"]
print(json.dumps({"conserve_close": t.conserve_close, "conserve_next": int(flags.sum())}))
"""


def test_after_write_a_notebook_reads_the_written_value_and_its_answer_changes(planted,
                                                                                 tmp_path):
    """Issue 42 item 5: `tune ... --write` writes the brainlab.toml of the folder it was typed
    in; a notebook kernel started from that folder (notebook_settings(), as every notebook
    reads its settings) then uses the written threshold, and the signal it drives changes.
    tests/test_settings_matrix.py shows every other consumer reads that same file."""
    def probe() -> dict:
        done = subprocess.run([sys.executable, "-c", PROBE, str(planted)], cwd=tmp_path,
                              env={**cli_env(tmp_path), "PWD": str(tmp_path)},
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    before = probe()
    done = tune_cli("sessions", "--db", str(planted), "--budget", "10", "--write",
                    home=tmp_path)
    assert done.returncode == 0, done.stderr
    written = tomllib.loads((tmp_path / "brainlab.toml").read_text())["thresholds"]
    after = probe()
    assert after["conserve_close"] == written["conserve_close"] != before["conserve_close"]
    assert after["conserve_next"] != before["conserve_next"]
