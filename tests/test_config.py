"""Settings loaded once (issue 23 item 5): ``--config``, ./brainlab.toml, one typed validator.

The CLI runs in a subprocess from a shell-like working directory, as a user runs it.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import query, write

from brainlab.common.errors import ConfigError, SourceError
from brainlab.settings import load_settings
from brainlab.sim.policies import make_policy
from brainlab.spec.regulator import RegulatorRules, named_rule_sets
from brainlab.spec.thresholds import Thresholds
from brainlab.store.ingest import ingest_brain

CLAIM = "sess_id: sess-20260101-0900-work\nopened_at: 2026-01-01T09:00\nstatus: closed\n"


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "BRAINLAB_CONFIG"}
    return subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("text", "expected"), [
    ("[thresholds]\nstale_ratio_max = 'abc'\n",
     "Error: bad.toml: threshold stale_ratio_max expects a number, got 'abc'"),
    ("[thresholds]\nnope = 1\n", "Error: bad.toml: unknown threshold(s): nope; known: ["),
    ("[regulator]\nmax_reviews = -1\n", "Error: bad.toml: rule max_reviews must be >= 0, got -1"),
    ("colour = 'red'\n", "Error: bad.toml: unknown key(s) colour; known: thresholds,"),
    ("[paths]\nstore = 'x'\n", "Error: bad.toml: unknown path(s) store; known: db,"),
    ("[thresholds\n", "Error: bad.toml: not a readable TOML file"),
])
def test_a_bad_config_file_is_one_error_line_naming_file_and_key(tmp_path, text, expected):
    (tmp_path / "bad.toml").write_text(text, encoding="utf-8")
    got = cli(tmp_path, "--config", "bad.toml", "sql", "SELECT 1")
    assert got.returncode == 1
    assert got.stderr.startswith(expected), got.stderr
    assert len(got.stderr.strip().splitlines()) == 1 and "Traceback" not in got.stderr


def test_brainlab_toml_in_the_working_directory_feeds_every_command_its_db(tmp_path, brain):
    write(brain, "claims/sess-20260101-0900-work.yml", CLAIM)
    (tmp_path / "brainlab.toml").write_text("[paths]\ndb = 'stores/team.duckdb'\n",
                                            encoding="utf-8")
    (tmp_path / "stores").mkdir()
    ingested = cli(tmp_path, "ingest", "brain", str(brain))
    assert ingested.returncode == 0, ingested.stderr
    store = tmp_path / "stores" / "team.duckdb"
    assert store.exists() and not (tmp_path / "data").exists()
    read = cli(tmp_path, "sql", "SELECT count(*) AS n FROM claims")
    assert read.returncode == 0, read.stderr
    assert " 1 " in read.stdout
    # an option on the command line still wins over the file
    other = cli(tmp_path, "ingest", "brain", str(brain), "--db", "other.duckdb")
    assert other.returncode == 0 and (tmp_path / "other.duckdb").exists()


def test_settings_file_tables_become_typed_settings(tmp_path):
    path = tmp_path / "conf.toml"
    path.write_text("timezone = 'Europe/Paris'\n[thresholds]\nratio_window = 14\n"
                    "[regulator]\nmax_reviews = 4\n[paths]\nreports = 'out'\n", encoding="utf-8")
    settings = load_settings(path)
    assert settings.thresholds == Thresholds(ratio_window=14)
    assert settings.rules == RegulatorRules(max_reviews=4)
    assert settings.reports == tmp_path / "out" and settings.timezone == "Europe/Paris"
    # --rules specifications apply on top of the file's [regulator] table
    sets = named_rule_sets(["default", "max_refusals=0"], base=settings.rules)
    assert sets["default"].max_reviews == 4 and sets["max_refusals=0"].max_refusals == 0


def test_no_file_means_the_spec_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BRAINLAB_CONFIG", raising=False)
    assert load_settings() == load_settings(None)
    assert load_settings().thresholds == Thresholds() and load_settings().source is None


def test_one_validator_types_thresholds_rules_and_policies():
    """The same checks and wording for the three kinds of key=value (spec/values.py)."""
    with pytest.raises(ConfigError, match="threshold ratio_window expects an integer, got 2.5"):
        Thresholds().replace(ratio_window=2.5)
    with pytest.raises(ConfigError, match="rule max_reviews expects an integer, got 2.5"):
        RegulatorRules().replace(max_reviews=2.5)
    with pytest.raises(ConfigError, match="rule refuse_fait_faux expects true or false"):
        RegulatorRules().replace(refuse_fait_faux=1)
    with pytest.raises(Exception, match="parameter k expects an integer, got 2.5"):
        make_policy("history:k=2.5")
    assert RegulatorRules().replace(max_reviews=4.0).max_reviews == 4


def test_ingest_brain_is_one_library_call(brain, db):
    write(brain, "claims/sess-20260101-0900-work.yml", CLAIM)
    summary = ingest_brain(db, brain)
    assert summary.loaded == {"claims": 1}
    assert query(db, "SELECT sess_id FROM claims")["sess_id"].tolist() == [
        "sess-20260101-0900-work"]


def test_ingest_brain_refuses_a_folder_without_brain_files_before_touching_the_store(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError):
        ingest_brain(tmp_path / "x.duckdb", tmp_path / "empty", require_files=True)
    assert not (tmp_path / "x.duckdb").exists()
