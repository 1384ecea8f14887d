"""``brainlab check PATH``: lines, summary, exit codes 0/1/2, JSON, and SARIF valid against 2.1.0.

The SARIF output is validated against the official OASIS SARIF 2.1.0 JSON schema (errata 01),
shipped as tests/fixtures/sarif/sarif-schema-2.1.0.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
from click.testing import CliRunner
from conftest import TEMPLATE_BRAIN, write

from brainlab.cli import main

SCHEMA = Path(__file__).parent / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"


def run(*args):
    return CliRunner().invoke(main, ["check", *map(str, args)])


def crafted(brain: Path) -> Path:
    """One error (BRK001, 3 sources) and one warning (WSP004, a custom workspace file)."""
    write(brain, "progression/broker/2026-03-01-p-core-01.md",
          "Context-broker — inhale sprint p-core-01\n\nProjet détecté : p\n\nSource map :\n"
          '  developer → ["a.ts", "b.ts", "c.ts"]\n')
    write(brain, "workspace/p-s1/README.md", "# p-s1\n\n## Lifecycle\nttl: 7d\narchive: keep\n")
    write(brain, "workspace/p-s1/notes.md", "custom\n")
    return brain


def test_text_lines_summary_and_exit_1_on_an_error(brain):
    result = run(crafted(brain))
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("16 of 38 rules not evaluated")  # no --db
    assert lines[1].startswith("progression/broker/2026-03-01-p-core-01.md:6: BRK001 [error]")
    assert lines[2].startswith("workspace/p-s1/notes.md:1: WSP004 [error]")
    assert lines[-1] == "Found 2 violation(s) (2 error): BRK001 1, WSP004 1 (16 not evaluated)."


def test_exit_0_when_only_warnings_or_nothing(brain):
    assert run(crafted(brain), "--ignore", "BRK001,WSP004").exit_code == 0
    write(brain, "progression/metabolism/2026-03-01-sess-20260301-0800-work.md",
          "# Metabolism — 2026-03-01 — sess-20260301-0800-work\n\n| type | work |\n")
    result = run(brain, "--select", "MET")
    assert result.exit_code == 0 and "MET001 [warning]" in result.output


def test_usage_errors_exit_2_without_traceback(brain, tmp_path):
    for args in ([brain, "--select", "NOPE9"], [tmp_path / "missing"], [brain, "--format", "x"],
                 [brain, "--db", tmp_path / "none.duckdb"]):
        result = run(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output
    assert run(brain, "--select", "NOPE9").output.startswith("Error: unknown rule id(s) NOPE9")


def test_json_is_a_list_of_violations(brain):
    result = run(crafted(brain), "--format", "json")
    rows = json.loads(result.output)
    assert [r["rule"] for r in rows] == ["BRK001", "WSP004"]
    assert {"rule", "severity", "subject", "file", "line", "message"} <= set(rows[0])
    assert rows[0]["subject"] == "p-core-01/developer" and rows[0]["line"] == 6


def test_sarif_is_valid_sarif_2_1_0(brain):
    result = run(crafted(brain), "--format", "sarif")
    log = json.loads(result.output)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(log)
    (run_,) = log["runs"]
    assert [r["ruleId"] for r in run_["results"]] == ["BRK001", "WSP004"]
    rules = run_["tool"]["driver"]["rules"]
    assert rules[run_["results"][0]["ruleIndex"]]["id"] == "BRK001"
    location = run_["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "progression/broker/2026-03-01-p-core-01.md"
    assert location["region"]["startLine"] == 6
    (invocation,) = run_["invocations"]  # without --db: the transcript rules are named
    unrun = {n["associatedRule"]["id"] for n in invocation["toolExecutionNotifications"]}
    assert {"WSP009", "MOD004", "BOT001", "CLO003"} <= unrun
    assert not unrun & {r["id"] for r in rules}


def test_sarif_schema_rejects_a_broken_log():
    """The validator really checks: a log without its version fails."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft4Validator(schema).iter_errors({"runs": []}))
    assert errors


def test_template_brain_has_no_false_positive():
    """The public template brain: no violation; its unreadable context file is listed and
    fails the check (exit 1), as a linter fails on a file it cannot parse."""
    result = run(TEMPLATE_BRAIN)
    assert result.exit_code == 1, result.output
    assert "No violation" in result.output
    assert "contexts/session-pilote.yml:33: could not be read" in result.output


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    """``brainlab ...`` in a subprocess, as a user or a CI job runs it."""
    script = Path(sys.executable).parent / "brainlab"
    return subprocess.run([str(script), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_json_and_sarif_name_a_file_they_could_not_read(tmp_path):
    """Issue 28 item 10: JSON printed [] and SARIF nothing, exit 0, for the template's broken
    YAML; both now carry it, with PyYAML's problem and line, and exit 1."""
    done = cli("check", TEMPLATE_BRAIN, "--format", "json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    (item,) = [v for v in json.loads(done.stdout) if v["rule"] is None]
    assert item["file"] == "contexts/session-pilote.yml" and item["line"] == 33
    assert item["severity"] == "error" and item["subject_kind"] == "unreadable-file"
    assert "expected <block end>, but found '?'" in item["message"]
    assert "line 28" in item["message"]
    done = cli("check", TEMPLATE_BRAIN, "--format", "sarif", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    log = json.loads(done.stdout)
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(log)
    errors = [n for n in log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
              if n["level"] == "error"]
    assert len(errors) == 1
    location = errors[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "contexts/session-pilote.yml"
    assert location["region"]["startLine"] == 33


def test_rules_not_evaluated_are_said_first(tmp_path):
    """Without --db the first line says how many rules were not evaluated, not the last."""
    done = cli("check", TEMPLATE_BRAIN, cwd=tmp_path)
    first, *_rest, last = done.stdout.strip().splitlines()
    assert first.startswith("16 of 38 rules not evaluated: they read transcripts (give --db")
    assert last.startswith("No violation of the 22 rule(s) checked (16 not evaluated)")


def test_console_script_runs_as_a_pre_commit_hook_would(brain):
    """The hook entry of .pre-commit-hooks.yaml: `brainlab check .` in the brain's folder."""
    hooks = (Path(__file__).parents[1] / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "entry: brainlab check" in hooks
    crafted(brain)
    script = Path(sys.executable).parent / "brainlab"  # the console script pip installed
    done = subprocess.run([str(script), "check", "."], cwd=brain,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "BRK001" in done.stdout
