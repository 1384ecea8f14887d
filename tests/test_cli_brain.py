"""The brainlab command for the foundation: ingest brain, errors, sql, synth, demo."""

from types import SimpleNamespace

from click.testing import CliRunner
from conftest import write

from brainlab.cli import main


def run(*args):
    result = CliRunner().invoke(main, list(map(str, args)))
    return result


def test_ingest_brain_reports_counts_and_errors(brain, db):
    write(brain, "claims/bad.yml", "sess_id: [oops\n")
    write(brain, "claims/sess-20260101-0900-work.yml", "sess_id: sess-20260101-0900-work\n")
    result = run("ingest", "brain", brain, "--db", db)
    assert result.exit_code == 0, result.output
    assert "1 error(s), 1 warning(s) recorded in ingest_errors" in result.output  # bad YAML,
    # a claim without opened_at (loaded, flagged): counted apart (issue 11 item 10)
    errors = run("errors", "--db", db)
    assert "bad.yml:1" in errors.output or "bad.yml:2" in errors.output
    assert "invalid YAML" in errors.output


def test_sql_on_missing_db_is_a_one_line_error(tmp_path):
    result = run("sql", "SELECT 1", "--db", tmp_path / "nope.duckdb")
    assert result.exit_code == 1
    assert result.output.startswith("Error: no database at")
    assert "Traceback" not in result.output


def test_synth_then_demo(tmp_path, cli_demo):
    synth = run("synth", "--out", tmp_path / "b", "--weeks", 2, "--seed", 3)
    assert synth.exit_code == 0 and "planted:" in synth.output
    # as a user types it, in an 80-column terminal (issue 28 item 9: brainlab.common.tables' style):
    # the run's one `brainlab demo --weeks 3 --seed 3` (conftest.cli_demo, whose page
    # test_otel_synth.py also reads)
    done, folder = cli_demo["done"], cli_demo["folder"]
    assert done.returncode == 0, done.stderr
    demo = SimpleNamespace(output=done.stdout)
    for heading in ("Sessions per category", "Health trend by ISO week", "Signals fired",
                    "Costliest agents", "brain-hypervisor", "What if: broker policies",
                    "What if: regulator rules", "telemetry:"):
        assert heading in demo.output
    lines = demo.output.splitlines()
    assert "[bold]" not in demo.output and "┃" not in demo.output  # no markup, no rich box
    # every line fits but those naming the run's folder (a temporary path), the ingest's
    # sources table included (before: 89 columns a source)
    assert max(len(line) for line in lines if str(folder) not in line) <= 80, lines
    ingest = next(n for n, line in enumerate(lines) if line.startswith("2/4 ingest into "))
    assert lines[ingest + 1].split() == ["source", "loaded", "unchanged", "removed", "rows",
                                         "errors", "warnings"]
    assert not [line for line in lines if line.startswith("(not shown")]  # every column fits
    agents = lines.index("Costliest agents")
    assert lines[agents + 2].split() == ["agent", "sessions", "share", "tokens", "use_share",
                                         "flag"]
    hypervisor = next(line for line in lines if line.startswith(" brain-hypervisor"))
    assert "%" in hypervisor and "always loaded" in hypervisor  # shares as %, flag shown
    broker = next(n for n, line in enumerate(lines) if line.startswith(" policy "))
    # the broker what-if with its intervals and its verdict against the recorded policy
    assert lines[broker].split() == ["policy", "tokens", "miss", "rate", "miss", "90%", "vs",
                                     "recorded"]
    greedy = next(line for line in lines[broker:] if line.startswith(" greedy-domain"))
    assert "," in greedy.split()[1]  # tokens_total with thousands separators
    assert any(line.split()[:1] == ["max_relance_same_stop=2"] for line in lines)
    assert (folder / "demo" / "brainlab.duckdb").exists()
    report = next((folder / "demo" / "reports").glob("*/weekly_health.html"))
    assert f"weekly report: {report.relative_to(folder)}" in demo.output
