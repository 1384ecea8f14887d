"""The read commands as a user meets them (issue 11 items 5-10, 17; issue 12 item 5): `sql`
errors and empty states, `usage` tables, JSON and CSV against SQL on the store, `ingest brain`
on a folder without a brain, `report weekly` on a transcripts-only store, help at 80 columns,
and read commands that import nothing heavy."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import TEMPLATE_BRAIN, query

from brainlab import docgen
from brainlab.cli import main
from brainlab.report import select_weeks


def run(*args):
    return CliRunner().invoke(main, list(map(str, args)))


def shell(*args, columns: int = 80) -> subprocess.CompletedProcess:
    """The real `brainlab` in a subprocess, with a terminal width of ``columns``."""
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "50"}
    return subprocess.run([sys.executable, "-m", "brainlab.cli", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=120)


# --- brainlab sql (item 5, 6) ---------------------------------------------------------------

@pytest.mark.parametrize("statement", [
    "selec 1",                                   # a syntax error
    "CREATE TABLE t (a INTEGER)",                # a write refused by the read-only connection
    "SELECT * FROM no_such_view",                # an unknown relation
    "SELECT 1; SELECT 2",                        # several statements
])
def test_sql_errors_are_one_line_and_exit_1(corpus_store, statement):
    result = shell("sql", statement, "--db", corpus_store)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    if ";" in statement:
        assert "one statement" in lines[0] and "2" in lines[0]
    if statement.startswith("CREATE"):
        assert "read-only" in lines[0]


def test_sql_empty_result_names_what_is_missing(template_store):
    """The README's own sql example on the template brain (no metabolism logs)."""
    result = run("sql", "SELECT iso_week, sessions, mean_health, coach_triggers "
                        "FROM weekly_health", "--db", template_store)
    assert result.exit_code == 0, result.output
    assert "Empty DataFrame" not in result.output
    assert "No rows" in result.output and "metabolism logs" in result.output
    assert "brainlab ingest brain" in result.output


def test_sql_prints_a_readable_table(corpus_store):
    result = shell("sql", "SELECT day, total_tokens, cost_usd FROM usage_daily ORDER BY day",
                   "--db", corpus_store)
    assert result.returncode == 0, result.stderr
    first_day, tokens = query(corpus_store, "SELECT day, total_tokens FROM usage_daily "
                                            "ORDER BY day LIMIT 1").iloc[0]
    assert f"{first_day:%Y-%m-%d}" in result.stdout and f"{int(tokens):,}" in result.stdout
    assert all(len(line) <= 80 for line in result.stdout.splitlines())


# --- brainlab usage (items 6, 7) --------------------------------------------------------------

def _json(*args):
    result = run("usage", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_usage_json_equals_the_views(corpus_store):
    daily = _json("daily", "--json", "--db", corpus_store)
    view = query(corpus_store, "SELECT * FROM usage_daily ORDER BY day")
    assert [d["day"] for d in daily] == [f"{d:%Y-%m-%d}" for d in view.day]
    for name in ("input_tokens", "output_tokens", "cache_creation_tokens",
                 "cache_read_tokens", "total_tokens", "requests"):
        assert [d[name] for d in daily] == view[name].astype(int).tolist()
    assert [d["cost_usd"] for d in daily] == pytest.approx(view.cost_usd.tolist())

    weekly = _json("weekly", "--json", "--db", corpus_store)
    wview = query(corpus_store, "SELECT * FROM usage_weekly ORDER BY week_start")
    assert [w["week"] for w in weekly] == [f"{y}-W{w:02d}" for y, w in
                                           zip(wview.iso_year, wview.iso_week, strict=True)]
    assert [w["total_tokens"] for w in weekly] == wview.total_tokens.astype(int).tolist()

    monthly = _json("monthly", "--json", "--db", corpus_store)
    assert sum(m["total_tokens"] for m in monthly) == int(view.total_tokens.sum())
    assert [m["month"] for m in monthly] == sorted({f"{d:%Y-%m}" for d in view.day})

    models = _json("models", "--json", "--db", corpus_store)
    mview = query(corpus_store, "SELECT model, total_tokens FROM usage_models")
    assert {m["model"]: m["total_tokens"] for m in models} == dict(
        zip(mview.model, mview.total_tokens.astype(int), strict=True))


def test_usage_filters_match_sql(corpus_store):
    project, first, last = query(corpus_store, """
        SELECT project, min(CAST(ts AS DATE)), max(CAST(ts AS DATE)) FROM cc_requests
        GROUP BY project ORDER BY count(DISTINCT CAST(ts AS DATE)) DESC, project LIMIT 1""").iloc[0]
    first, last = f"{first:%Y-%m-%d}", f"{last:%Y-%m-%d}"
    daily = _json("daily", "--json", "--project", project, "--since", first, "--until", last,
                  "--db", corpus_store)
    expected = query(corpus_store, """
        SELECT CAST(ts AS DATE) AS day, sum(total) AS tokens FROM (
            SELECT ts, input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens
                   AS total FROM cc_requests WHERE project = ?) GROUP BY day ORDER BY day""",
                     [project])
    assert [d["total_tokens"] for d in daily] == expected.tokens.astype(int).tolist()
    assert len(daily) >= 2
    second = daily[1]["day"]
    later = _json("daily", "--json", "--project", project, "--since", second,
                  "--db", corpus_store)
    def exact(records):  # costs are float sums: equal to the cent, not always to the last bit
        return [{k: v for k, v in r.items() if k != "cost_usd"} for r in records]

    assert exact(later) == exact(daily[1:])
    assert [r["cost_usd"] for r in later] == pytest.approx([r["cost_usd"] for r in daily[1:]])
    newest = _json("daily", "--json", "--limit", 2, "--db", corpus_store)
    every = _json("daily", "--json", "--db", corpus_store)
    assert exact(newest) == exact(every[-2:])
    sessions = _json("sessions", "--json", "--project", project, "--db", corpus_store)
    assert {s["project"] for s in sessions} == {project}
    assert all(s["subagent_cost_usd"] is not None for s in sessions)  # 0, never NaN/null
    out = run("usage", "sessions", "--csv", "--db", corpus_store).output
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == query(corpus_store, "SELECT count(*) AS n FROM usage_sessions").n[0]


@pytest.mark.parametrize("view", ["daily", "weekly", "monthly", "sessions", "models"])
@pytest.mark.parametrize("store", ["corpus", "demo"])
def test_usage_table_fits_80_columns(corpus_store, demo, store, view):
    corpus_store = corpus_store if store == "corpus" else demo["db"]
    result = shell("usage", view, "--db", corpus_store, columns=80)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert "NaN" not in text and "None" not in text and "iso_year" not in text
    total_row = next(line for line in text.splitlines() if line.strip().startswith("total"))
    cost = query(corpus_store, "SELECT sum(cost_usd) AS c, sum(total_tokens) AS t "
                               "FROM usage_daily").iloc[0]
    assert f"${cost.c:,.2f}" in total_row and f"{int(cost.t):,}" in total_row
    if view == "weekly":
        last = query(corpus_store, "SELECT max(day) AS d FROM usage_daily").d[0]
        year, week, _ = last.isocalendar()
        assert f"{year}-W{week:02d}" in text
    wide = shell("usage", view, "--db", corpus_store, columns=200)
    assert "cache read" in wide.stdout  # shown when there is room


def test_usage_empty_states(template_store, corpus_store):
    none = run("usage", "--db", template_store)
    assert none.exit_code == 0 and "Empty DataFrame" not in none.output
    assert "brainlab ingest claude" in none.output
    filtered = run("usage", "daily", "--since", "2099-01-01", "--db", corpus_store)
    assert filtered.exit_code == 0 and "--since 2099-01-01" in filtered.output
    assert "holds requests from" in filtered.output
    bad = run("usage", "--since", "yesterday", "--db", corpus_store)
    assert bad.exit_code == 1 and bad.output.startswith("Error: --since must be a day")


# --- ingest brain on a folder without a brain (item 8) ------------------------------------------

def test_ingest_brain_on_a_folder_without_a_brain(tmp_path):
    db = tmp_path / "b.duckdb"
    result = run("ingest", "brain", TEMPLATE_BRAIN.parent, "--db", db)
    assert result.exit_code == 1
    assert result.output.startswith("Error: nothing brain-like in")
    assert "agents/*.md" in result.output and "progression/metabolism/*.md" in result.output
    assert str(TEMPLATE_BRAIN) in result.output  # the brain below it is named
    assert not db.exists()  # nothing written


# --- report weekly on a transcripts-only store (item 9) -----------------------------------------

def test_report_weeks_count_transcript_sessions(corpus_store, empty_store, tmp_path):
    last = query(corpus_store, "SELECT max(first_ts) AS t FROM usage_sessions").t[0]
    year, week, _ = last.date().isocalendar()
    assert select_weeks(corpus_store) == [f"{year}-W{week:02d}"]
    none = run("report", "weekly", "--db", empty_store, "--out", tmp_path)
    assert none.exit_code == 1
    assert "no metabolism log, no Claude Code transcript" in none.output
    assert "ingest a brain first" not in none.output


# --- help (item 17) ---------------------------------------------------------------------------

def _help_here(args) -> str:
    """``brainlab ARGS --help`` run in this process as ``python -m brainlab.cli`` names itself
    (its usage lines), its width from $COLUMNS as in a subprocess (click's CliRunner would
    force 80 columns where a terminal of 80 gives 78)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main.main(args=[*args, "--help"], prog_name="python -m brainlab.cli",
                         standalone_mode=False)
    assert code == 0, args
    return out.getvalue()


def test_every_help_fits_80_columns_and_every_option_is_explained(monkeypatch):
    """The top-level help in a real subprocess with COLUMNS=80, as a user runs it, equal to
    the same help run here; every command's help here with COLUMNS=80 (issue 28 item 1: an
    interpreter per command's help, 33 of them, checked nothing a subprocess adds)."""
    real = shell("--help", columns=80)
    assert real.returncode == 0, real.stderr
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("LINES", "50")
    assert real.stdout == _help_here([])
    for full, command in docgen.commands():
        text = _help_here(full.split()[1:])
        wide = [line for line in text.splitlines() if len(line) > 80]
        assert wide == [], (full, wide)
        for param in command.params:
            if param.param_type_name == "option" and param.name != "help":
                assert (param.help or "").strip(), f"{full} {param.opts[0]} has no help"


# --- start-up (issue 12 item 5) ----------------------------------------------------------------

HEAVY = {"pandas", "numpy", "pyarrow", "yaml", "altair", "nbformat", "rich"}


def _engine_alone() -> bool:
    """Whether this duckdb has its engine as a module of its own (``_duckdb``, duckdb >= 1.4)."""
    import importlib.util

    return importlib.util.find_spec("_duckdb") is not None


@pytest.mark.parametrize("args", [["usage", "daily"], ["usage", "sessions", "--json"],
                                  ["sql", "SELECT count(*) FROM cc_usage_rollup"], ["errors"]])
def test_read_commands_import_nothing_heavy(corpus_store, args):
    """The console script a user runs, under -X importtime: no pandas, rich or the duckdb
    package (its relation API and version lookup), only DuckDB's engine module."""
    script = Path(sys.executable).with_name("brainlab")
    done = subprocess.run([sys.executable, "-X", "importtime", str(script), *args,
                           "--db", str(corpus_store)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0]
                for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert imported.isdisjoint(HEAVY), sorted(imported & HEAVY)
    if _engine_alone():
        assert "_duckdb" in imported and "duckdb" not in imported
    assert done.stdout.strip()


@pytest.mark.parametrize("env", [{}, {"COLUMNS": "123"}, {"FORCE_COLOR": "1"},
                                 {"FORCE_COLOR": "1", "TERM": "dumb"}, {"TTY_COMPATIBLE": "0"},
                                 {"TTY_COMPATIBLE": "1", "COLUMNS": "90"}])
def test_plain_output_follows_riches_terminal_rules(monkeypatch, env):
    """Width and bold decided without rich agree with a rich Console's."""
    from rich.console import Console

    from brainlab.common import terminal

    for name in ("COLUMNS", "FORCE_COLOR", "TERM", "TTY_COMPATIBLE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    rich = Console(soft_wrap=True)
    lazy = terminal.LazyConsole(soft_wrap=True)
    assert (lazy.width, lazy.styled) == (rich.width, rich.is_terminal
                                         and rich.color_system is not None)
    assert lazy._console is None  # answered without making a rich Console
