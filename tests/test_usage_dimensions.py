"""`brainlab usage --by DIM` and its filters: usage summed in one place (issue 40 items 2, 4).

Every grouping is a dimension of the table macro ``usage_by`` (one line each in
store/models/marts/usage_by.sql). Checked on the corpus store (real transcripts, a real
DuckDB file, the command in-process): each dimension's rows add up to the total; a filter
keeps exactly the rows ``--by`` gives for its value; ``usage-who`` is ``usage --by`` with
days of ``--timezone``. And on a copy of the package, one added line is a new ``--by``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from claude_factory import assistant, usage, write
from click.testing import CliRunner

from brainlab.cli import main
from brainlab.metrics.usage import DIMENSIONS
from brainlab.store import template, usage_rollup


def usage_json(db: Path, *args: str, command: str = "usage") -> list[dict]:
    done = CliRunner().invoke(main, [command, *args, "--db", str(db), "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def _sums(rows: list[dict]) -> tuple[int, int, float]:
    return (sum(r["requests"] for r in rows), sum(r["total_tokens"] for r in rows),
            round(sum(r["cost_usd"] or 0 for r in rows), 6))


def test_every_dimension_adds_up_to_the_total(corpus_store):
    whole = usage_json(corpus_store, "total", "--timezone", "UTC")
    assert len(whole) == 1 and whole[0]["requests"] > 1000
    for dim in DIMENSIONS:
        rows = usage_json(corpus_store, "--by", dim, "--timezone", "UTC")
        assert _sums(rows) == _sums(whole), dim
    # the null: no telemetry and no lake in this store, so nobody is named
    for dim in ("user", "machine", "mcp_server", "query_source"):
        assert [r[DIMENSIONS[dim]] for r in usage_json(corpus_store, "--by", dim)] == [None]
    # the planted: the corpus's calls come from several projects, models and branches, and
    # 55 of its assistant lines name a skill (attributionSkill, issue 45), 40 a plugin
    for dim in ("project", "model", "branch", "session", "skill", "plugin"):
        assert len(usage_json(corpus_store, "--by", dim)) > 1, dim


def test_a_filter_keeps_the_rows_by_gives(corpus_store):
    zone = ("--timezone", "Europe/Paris")
    for dim, option in (("branch", "--branch"), ("project", "--project")):
        split = usage_json(corpus_store, "daily", "--by", dim, *zone)
        column = DIMENSIONS[dim]
        value = max({r[column] for r in split if r[column]},
                    key=lambda v: sum(r["requests"] for r in split if r[column] == v))
        kept = usage_json(corpus_store, "daily", option, value, *zone)
        assert kept == [{k: v for k, v in r.items() if k != column}
                        for r in split if r[column] == value], dim
        assert 0 < len(kept) < len(usage_json(corpus_store, "daily", *zone))


def test_usage_who_is_usage_by_with_days_of_the_zone(corpus_store):
    days = usage_json(corpus_store, "daily", "--timezone", "Asia/Kathmandu")
    since, until = days[1]["day"], days[-2]["day"]
    span = ("--since", since, "--until", until, "--timezone", "Asia/Kathmandu")
    who = usage_json(corpus_store, "--by", "model", *span, command="usage-who")
    by = usage_json(corpus_store, "--by", "model", *span)
    assert [(r["model"], r["requests"]) for r in who] == [(r["model"], r["requests"])
                                                          for r in by]
    assert sum(r["requests"] for r in who) == sum(r["requests"] for r in days[1:-1])
    assert sum(r["requests"] for r in who) < sum(r["requests"] for r in days)


def test_the_help_names_every_dimension():
    text = CliRunner().invoke(main, ["usage", "--help"], terminal_width=400).output
    assert all(dim in text for dim in DIMENSIONS if dim not in ("subagent", "nested")), text


LINE = "       CASE WHEN list_contains(dims, 'hour') THEN hour(bucket) END AS utc_hour,\n"


def test_adding_a_dimension_is_one_line(tmp_path):
    """A copy of the package with one line added to usage_by.sql: `usage --by hour` works,
    from the roll-up and from the calls, and its rows add up to the day."""
    package = tmp_path / "pkg"
    shutil.copytree(Path(usage_rollup.__file__).parents[1], package / "brainlab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    macro = package / "brainlab" / "store" / "models" / "marts" / "usage_by.sql"
    text = macro.read_text(encoding="utf-8")
    anchor = "       CASE WHEN list_contains(dims, 'source')"
    assert text.count(anchor) == 1
    macro.write_text(text.replace(anchor, LINE + anchor), encoding="utf-8")
    root = tmp_path / "projects"
    write(root / "p" / "s1.jsonl", [
        assistant("s1", f"2026-05-04T{h:02d}:{m:02d}:00.000Z", f"m{h}{m}", f"r{h}{m}",
                  usage(10, 5 * h)) for h, m in ((9, 0), (9, 30), (11, 5))])
    env = {**os.environ, "PYTHONPATH": str(package), template.CACHE_ENV: str(tmp_path / "c")}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd=tmp_path,
                              capture_output=True, text=True, env=env, timeout=300)

    db = str(tmp_path / "b.duckdb")
    assert cli("ingest", "claude", str(root), "--db", db).returncode == 0
    done = cli("usage", "daily", "--by", "hour", "--timezone", "UTC", "--json", "--db", db)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(r["day"], r["utc_hour"], r["requests"], r["output_tokens"]) for r in rows] == [
        ("2026-05-04", 9, 2, 90), ("2026-05-04", 11, 1, 55)]


@pytest.mark.parametrize("bad", ["colour", "user,colour"])
def test_an_unknown_dimension_is_one_error_line(corpus_store, bad):
    done = CliRunner().invoke(main, ["usage", "--by", bad, "--db", str(corpus_store)])
    assert done.exit_code == 1
    assert done.output.startswith("Error: --by must be one of session, subagent,")
