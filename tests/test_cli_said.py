"""Issue 28 items 10 and 11: what the CLI used to drop or hide is said, in one line.

Every command runs in a subprocess from a shell-like cwd, stderr and stdout captured apart
(not a terminal, as in a log or a CI job).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "brainlab"  # the console script pip installed


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    return lines[0]


def test_sql_keeps_duckdbs_suggestions(empty_store, tmp_path):
    line = one_error_line(cli("sql", "SELECT * FROM cc_session", "--db", empty_store,
                              cwd=tmp_path))
    assert 'Did you mean "cc_sessions"?' in line
    line = one_error_line(cli("sql", "SELECT sesion_id FROM cc_sessions", "--db", empty_store,
                              cwd=tmp_path))
    assert 'Candidate bindings: "session_id"' in line


@pytest.mark.parametrize("kind", ["sprints", "circuits"])
def test_ingest_a_folder_holding_none_says_so(kind, tmp_path):
    (tmp_path / "empty").mkdir()
    db = tmp_path / "b.duckdb"
    line = one_error_line(cli("ingest", kind, "empty", "--db", db, cwd=tmp_path))
    assert "empty" in line and "looked for" in line and "nothing was written" in line
    assert not db.exists()


def test_json_and_csv_together_is_one_error(empty_store, tmp_path):
    done = cli("usage", "--json", "--csv", "--db", empty_store, cwd=tmp_path)
    assert "--json and --csv" in one_error_line(done)
    assert done.stdout == ""


def test_an_ingest_log_has_no_blank_first_line(brain, tmp_path):
    (brain / "progression" / "sprints").mkdir(parents=True)
    (brain / "progression" / "sprints" / "s.jsonl").write_text(
        '{"sprint": "p-core-01", "agent": "developer"}\n', encoding="utf-8")
    done = cli("ingest", "sprints", brain, "--db", tmp_path / "b.duckdb", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not done.stderr.startswith("\n"), repr(done.stderr[:80])
    assert done.stdout.splitlines()[0].strip(), repr(done.stdout[:80])


@pytest.mark.parametrize("args", [["synth", "--end", "2026/01/01", "--out", "s"],
                                  ["synth", "--weeks", "0", "--out", "s"],
                                  ["demo", "--weeks", "0", "--dir", "d"]])
def test_bad_synth_and_demo_options_are_one_error_line(args, tmp_path):
    line = one_error_line(cli(*args, cwd=tmp_path))
    assert args[1] in line
    assert not (tmp_path / "d").exists()


def test_a_dotted_model_name_in_a_price_file_suggests_the_quoted_key(tmp_path):
    (tmp_path / "prices.toml").write_text(
        "[models.glm-4.7]\ninput = 1.0\noutput = 2.0\ncache_write_5m = 1.0\ncache_read = 0.1\n",
        encoding="utf-8")
    (tmp_path / "projects").mkdir()
    line = one_error_line(cli("ingest", "claude", "projects", "--prices", "prices.toml",
                              "--db", tmp_path / "b.duckdb", cwd=tmp_path))
    assert '[models."glm-4.7"]' in line


def test_an_index_and_a_reference_in_agents_are_not_agents(tmp_path):
    """The template's agents/AGENTS.md (type: index) and bsi-schema.md (type: reference)."""
    from conftest import SHARED, query

    template = SHARED / "reference" / "cortex-template" / "Tetardtek__Cortex-Template"
    db = tmp_path / "b.duckdb"
    done = cli("ingest", "brain", template, "--db", db, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    agents = set(query(db, "SELECT agent FROM agents")["agent"])
    assert {"coach", "helloWorld", "metabolism-scribe", "context-broker"} <= agents
    assert not agents & {"AGENTS", "bsi-schema"}


def test_make_demo_installs_no_spark_and_make_test_does():
    """`make demo` installs what the demo runs (no pyspark and its Java-facing stack)."""
    import shutil

    if shutil.which("make") is None:
        pytest.fail("make is missing")
    repo = Path(__file__).resolve().parents[1]

    def planned(target: str) -> str:
        done = subprocess.run(["make", "-n", "-B", target], cwd=repo, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return "\n".join(line.split("#")[0] for line in done.stdout.splitlines()
                         if "pip install" in line)

    assert not {"spark", "dev", "prices"} & set(planned("demo").replace("'", " ").replace(
        "[", " ").replace("]", " ").replace(",", " ").split())
    # the tests also check the pinned price package against brainlab's base table (issue 45)
    assert "pip install --quiet -e '.[dev,spark,prices]'" in planned("test")
