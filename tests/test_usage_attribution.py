"""Cost by plugin and by skill (issue 45 item 4): the lines' attribution, else telemetry's.

Planted: calls working for two skills of one plugin, one skill known only from its
api_request event (telemetry), the rest naming none. Each dimension's rows sum exactly to
the total `usage daily` gives; a store whose lines name nothing (the null case) has one
'(none)' row per dimension holding every call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime

import pytest
from claude_factory import assistant, usage, write

from brainlab.metrics.attribution import cost_by
from brainlab.otel.export import Call, logs_requests, write_json_lines

S = "7a7a7a7a-0000-4000-8000-7a7a7a7a7a7a"
DAY = "2026-11-20T09:{:02d}:00.000Z"


def cli(*args):
    done = subprocess.run([sys.executable, "-m", "brainlab.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def store(tmp_path, attributed: bool = True):
    tagged = {"attributionPlugin": "gns-cowork", "attributionSkill": "gns-cowork:bootstrap"}
    lines = [
        assistant(S, DAY.format(0), "m1", "r1", usage(100, 1000), **(tagged if attributed else {})),
        assistant(S, DAY.format(1), "m2", "r2", usage(100, 2000),
                  **({"attributionPlugin": "gns-cowork", "attributionSkill": "gns-cowork:review"}
                     if attributed else {})),
        assistant(S, DAY.format(2), "m3", "r3", usage(100, 4000)),  # skill from telemetry
        assistant(S, DAY.format(3), "m4", "r4", usage(100, 8000))]
    write(tmp_path / "projects" / "-home-u-alpha" / f"{S}.jsonl", lines)
    db = tmp_path / "b.duckdb"
    cli("ingest", "claude", tmp_path / "projects", "--db", db)
    if attributed:
        event = Call(S, "r3", "claude-opus-4-5-20251101", datetime(2026, 11, 20, 9, 2),
                     100, 4000, skill_name="pdf")
        cli("ingest", "otel", write_json_lines(tmp_path / "otel.jsonl", logs_requests([event])),
            "--db", db)
    return db


def total(db):
    rows = json.loads(cli("usage", "daily", "--db", db, "--json", "--timezone", "UTC"))
    return sum(r["cost_usd"] for r in rows), sum(r["requests"] for r in rows)


def test_cost_by_plugin_and_skill_sums_exactly_to_the_total(tmp_path):
    db = store(tmp_path)
    cost, calls = total(db)
    out = 25 / 1e6  # claude-opus-4-5's output rate; input 100 tokens at $5/M each call
    skills = {r["value"]: (r["requests"], r["cost_usd"], r["attributed_by"])
              for r in cost_by(db, "skill")}
    assert skills == {
        "gns-cowork:bootstrap": (1, pytest.approx(500 / 1e6 + 1000 * out), "line"),
        "gns-cowork:review": (1, pytest.approx(500 / 1e6 + 2000 * out), "line"),
        "pdf": (1, pytest.approx(500 / 1e6 + 4000 * out), "telemetry"),
        "(none)": (1, pytest.approx(500 / 1e6 + 8000 * out), None)}
    plugins = {r["value"]: r["requests"] for r in cost_by(db, "plugin")}
    assert plugins == {"gns-cowork": 2, "(none)": 2}
    for dimension in ("plugin", "skill"):
        found = cost_by(db, dimension)
        assert sum(r["requests"] for r in found) == calls
        assert sum(r["cost_usd"] for r in found) == pytest.approx(cost, rel=1e-12)
        # `brainlab usage --by plugin|skill`: the same figures from the stored roll-up
        rows = json.loads(cli("usage", "--by", dimension, "--db", db, "--json",
                              "--timezone", "UTC"))
        by_cli = {r[dimension] or "(none)": (r["requests"], r["cost_usd"]) for r in rows}
        assert by_cli == {r["value"]: (r["requests"], pytest.approx(r["cost_usd"]))
                          for r in found}


def test_without_attribution_every_call_is_none(tmp_path):
    db = store(tmp_path, attributed=False)
    cost, calls = total(db)
    for dimension in ("plugin", "skill"):
        (row,) = cost_by(db, dimension)
        assert (row["value"], row["requests"]) == ("(none)", calls)
        assert row["cost_usd"] == pytest.approx(cost, rel=1e-12)
