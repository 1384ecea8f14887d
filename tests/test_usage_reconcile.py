"""`brainlab usage reconcile` (issue 45): transcripts, telemetry and the status line side by side.

A planted store: four sessions in transcripts, a telemetry export (the collector's OTLP JSON
lines) that agrees on one session and counts more input tokens on another and more output
tokens and cost on a third, status-line snapshots (one written by a real `brainlab
statusline` run, others as the status line writes its snapshot file). Exactly the two
planted sessions are flagged, with the planted gaps; one-source sessions are listed and say
so; the null case (the same telemetry without the planted excess) flags nothing.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from claude_factory import assistant, usage, write
from conftest import built_once, seeded_cache

from brainlab.otel.export import Call, logs_requests, write_json_lines

SCRIPT = Path(sys.executable).with_name("brainlab")
A, B, C, D = (f"{c * 8}-0000-4000-8000-{c * 12}" for c in "abcd")  # sessionIds, UUID-shaped
E, F = "e" * 8 + "-0000-4000-8000-" + "e" * 12, "f" * 8 + "-0000-4000-8000-" + "f" * 12
DAY = datetime(2026, 11, 20, 9, 0)
# usage(input, output, cache write, cache read) per session, one call each, Opus 4.5
CALLS = {A: (100, 200, 0, 1000), B: (100, 200, 0, 1000), C: (100, 200, 0, 1000),
         D: (7, 7, 0, 0)}
PLANTED = {B: {"input_tokens": 5_000}, C: {"output_tokens": 300}}  # telemetry's excess


def opus_cost(inp, out, cw, cr):  # claude-opus-4-5 rates, USD per million tokens
    return (inp * 5 + out * 25 + cw * 6.25 + cr * 0.5) / 1e6


def shell(*args, env):
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300)


def telemetry(path: Path, planted: bool) -> Path:
    """api_request events for A, B and C (request ids the transcripts hold), B and C with
    the planted excess when ``planted`` (C's cost follows its output tokens)."""
    calls = []
    for session in (A, B, C):
        inp, out, cw, cr = CALLS[session]
        extra = PLANTED.get(session, {}) if planted else {}
        inp += extra.get("input_tokens", 0)
        out += extra.get("output_tokens", 0)
        cost = opus_cost(inp - extra.get("input_tokens", 0), out, cw, cr)
        calls.append(Call(session, f"req_{session[0]}", "claude-opus-4-5-20251101", DAY,
                          input_tokens=inp, output_tokens=out, cache_read_tokens=cr,
                          cache_creation_tokens=cw, cost_usd=cost))
    return write_json_lines(path, logs_requests(calls))


def snapshot(session: str, ts: datetime, cost: float, inp: int, out: int) -> dict:
    """One line of the status line's snapshot file (brainlab/live/statusline.py)."""
    return {"ts": ts.replace(tzinfo=UTC).timestamp(), "session_id": session,
            "model_id": "claude-opus-4-5", "total_cost_usd": cost, "total_input_tokens": inp,
            "total_output_tokens": out}


@pytest.fixture
def env(tmp_path) -> dict:
    return dict(os.environ, BRAINLAB_CACHE_DIR=str(tmp_path / "cache"), COLUMNS="80")


def build(tmp_path: Path, env: dict, planted: bool = True) -> Path:
    """The store of the planted case (or, ``planted`` false, the null case) under
    ``tmp_path``: the transcripts, a real status line run and snapshots, the telemetry, each
    ingested by the CLI as a user runs it."""
    project = tmp_path / "projects" / "-home-u-projets-alpha"
    for session, counts in CALLS.items():
        write(project / f"{session}.jsonl", [assistant(
            session, DAY.isoformat() + ".000Z", f"msg_{session[0]}", f"req_{session[0]}",
            usage(*counts))])
    # the status line as Claude Code runs it: session E seen by the status line only
    seen = subprocess.run([str(SCRIPT), "statusline"], env=env, capture_output=True,
                          timeout=60, input=json.dumps({
                              "session_id": E, "model": {"id": "claude-opus-4-5"},
                              "cost": {"total_cost_usd": 0.42},
                              "context_window": {"total_input_tokens": 10,
                                                 "total_output_tokens": 20}}).encode())
    assert seen.returncode == 0 and seen.stdout.strip()
    live = Path(env["BRAINLAB_CACHE_DIR"]) / "live"
    lines = [snapshot(A, DAY.replace(hour=10), opus_cost(*CALLS[A]), 100, 200),
             snapshot(F, DAY.replace(hour=10), 1.00, 1000, 100),  # F: two days, cumulative
             snapshot(F, DAY.replace(day=21, hour=8), 1.50, 1500, 160)]
    with open(live / "limit_snapshots.jsonl", "a") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)
    db = tmp_path / "b.duckdb"
    done = shell("ingest", "claude", tmp_path / "projects", "--db", db, env=env)
    assert done.returncode == 0, done.stderr
    done = shell("ingest", "otel", telemetry(tmp_path / "otel.jsonl", planted), "--db", db,
                 env=env)
    assert done.returncode == 0, done.stderr
    return db


def built(tmp_path_factory, planted: bool) -> Path:
    """:func:`build` once a run for every test reading that case (conftest.built_once: each
    test built its own, three CLI runs and a status line, ~3 CPU-s); tests only read it. Its
    cache folder holds the run's empty-store template: the first ingest copies it instead of
    building the store (~2 CPU-s a case, docs/testing.md stop 27)."""
    def make(folder: Path) -> None:
        cache = seeded_cache(folder / "cache")
        build(folder, dict(os.environ, BRAINLAB_CACHE_DIR=str(cache), COLUMNS="80"), planted)

    name = "usage-reconcile-" + ("planted" if planted else "null")
    return built_once(tmp_path_factory, name, make) / "b.duckdb"


@pytest.fixture(scope="module")
def planted_db(tmp_path_factory) -> Path:
    return built(tmp_path_factory, planted=True)


@pytest.fixture(scope="module")
def null_db(tmp_path_factory) -> Path:
    return built(tmp_path_factory, planted=False)


def reconcile(db: Path, env: dict, *args) -> list[dict]:
    done = shell("usage", "reconcile", "--db", db, "--json", *args, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def planted_rows(planted_db, tmp_path_factory) -> list[dict]:
    """`usage reconcile --json` on the planted store, run once for the two tests reading its
    rows (each ran the same command on the same store before, docs/testing.md stop 27); each
    test gets a copy."""
    env = dict(os.environ, BRAINLAB_CACHE_DIR=str(tmp_path_factory.mktemp("reconcile") / "cache"),
               COLUMNS="80")
    return reconcile(planted_db, env)


def test_exactly_the_sessions_telemetry_counts_more_for_are_flagged(planted_rows):
    rows = {(r["session_id"], r["day"]): r for r in copy.deepcopy(planted_rows)}
    flagged = {session for (session, _day), r in rows.items() if r["flagged"]}
    assert flagged == {B, C}
    b, c = rows[B, "2026-11-20"], rows[C, "2026-11-20"]
    assert b["gap"]["input_tokens"] == 5_000 and b["gap"]["output_tokens"] == 0
    assert b["telemetry"]["input_tokens"] == 5_100 and b["transcripts"]["input_tokens"] == 100
    assert b["reconciled"]["input_tokens"] == 5_100  # telemetry is authoritative for input
    assert c["gap"]["output_tokens"] == 300 and c["gap"]["input_tokens"] == 0
    assert c["gap"]["cost_usd"] == pytest.approx(300 * 25 / 1e6)
    assert c["gap"]["cache_read_tokens"] == 0 and c["sources"] == ["transcripts", "telemetry"]
    a = rows[A, "2026-11-20"]
    assert a["sources"] == ["transcripts", "telemetry", "statusline"] and not a["flagged"]
    assert a["statusline"] == {"input_tokens": 100, "output_tokens": 200,
                               "cost_usd": pytest.approx(opus_cost(*CALLS[A]))}
    assert a["gap"] == {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0,
                        "cache_creation_tokens": 0, "cost_usd": pytest.approx(0, abs=1e-12)}
    for key in (c, a):
        assert set(key) == {"session_id", "day", "sources", "transcripts", "telemetry",
                            "statusline", "gap", "reconciled", "flagged", "note"}


def test_one_source_sessions_are_listed_unflagged_and_say_so(planted_rows):
    rows = {(r["session_id"], r["day"]): r for r in copy.deepcopy(planted_rows)}
    d, e = rows[D, "2026-11-20"], [r for (s, _), r in rows.items() if s == E]
    assert d["sources"] == ["transcripts"] and not d["flagged"]
    assert d["note"] == "seen by transcripts only: nothing to compare"
    assert d["telemetry"] is None and d["gap"]["input_tokens"] is None
    (e,) = e  # the real status line run: its own day, whatever today is
    assert e["sources"] == ["statusline"] and e["statusline"]["cost_usd"] == 0.42
    assert e["note"] == "seen by statusline only: nothing to compare" and not e["flagged"]
    # the status line's totals are cumulative: a day's figure is what the day added
    f = [rows[F, day]["statusline"] for day in ("2026-11-20", "2026-11-21")]
    assert [(x["input_tokens"], x["output_tokens"]) for x in f] == [(1000, 100), (500, 60)]
    assert [x["cost_usd"] for x in f] == pytest.approx([1.00, 0.50])


def test_null_telemetry_that_agrees_flags_nothing(null_db, env):
    db = null_db
    assert not [r for r in reconcile(db, env) if r["flagged"]]


def test_text_and_empty_store(planted_db, tmp_path, env):
    db = planted_db
    text = shell("usage", "reconcile", "--db", db, env=env)
    assert text.returncode == 0, text.stderr
    first = text.stdout.splitlines()[1:3]  # flagged first
    assert {line[:8] for line in first} == {B[:8], C[:8]} and all("YES" in x for x in first)
    assert "2 flagged" in text.stdout and max(map(len, text.stdout.splitlines())) <= 80
    csv = shell("usage", "reconcile", "--db", db, "--csv", env=env)
    assert csv.stdout.splitlines()[0].startswith("session_id,day,sources,")
    missing = shell("usage", "reconcile", "--db", tmp_path / "none.duckdb", env=env)
    assert missing.returncode == 1 and missing.stderr.startswith("Error:")
    (tmp_path / "nothing").mkdir()
    empty_db = tmp_path / "empty.duckdb"
    assert shell("ingest", "claude", tmp_path / "nothing", "--db", empty_db,
                 env=env).returncode == 0
    empty = shell("usage", "reconcile", "--db", empty_db, env=env)
    assert empty.returncode == 0 and "brainlab ingest otel FILE" in empty.stdout
    assert "Traceback" not in empty.stderr + missing.stderr
    bad = shell("usage", "reconcile", "--db", db, "--project", "x", env=env)
    assert bad.returncode != 0 and bad.stderr.startswith("Error:")


def test_the_weekly_report_shows_the_reconciled_figure_and_the_gap(planted_db):
    """The report's usage section: the reconciled cost beside the transcripts', the gap, and
    the flagged session-days (telemetry is authoritative for cost: C's planted $0.0075)."""
    from brainlab.metrics.report import Week
    from brainlab.report import sections
    from brainlab.spec.thresholds import Thresholds

    db = planted_db
    ctx = sections.ReportContext(db=db, week=Week.parse("2026-W47"), thresholds=Thresholds(),
                                 timezone="UTC")
    html = sections.usage(ctx)
    assert "Three measures" in html and "2 flagged" in html
    transcripts = sum(opus_cost(*c) for c in CALLS.values())
    gap = 300 * 25 / 1e6 + 1.50  # C's planted output tokens; F seen by the status line only
    assert (f"Reconciled cost ${transcripts + gap:,.2f} against the transcripts&#x27;"
            f" ${transcripts:,.2f} (gap ${gap:+,.2f}); 3 of 6 session-days") in html
