"""Counting rules 6-7 of issue 24: fast mode, prices over time, the Claude 3 family, `brainlab prices`.

Crafted transcripts (real line shapes), ingested by the real ingest, read through the CLI in
a subprocess. Rates: brainlab/data/prices.toml (each row names its source).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from claude_factory import assistant, usage, write

from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

S1 = "11111111-1111-4111-8111-111111111111"


def brainlab(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd=cwd,
                          capture_output=True, text=True, env=dict(os.environ), timeout=300)


def ingest(tmp_path: Path, lines: list[dict]) -> Path:
    write(tmp_path / "projects" / "p" / f"{S1}.jsonl", lines)
    db = tmp_path / "b.duckdb"
    con = open_writer(db)
    ingest_claude(con, tmp_path / "projects", workers=1)
    con.close()
    return db


def models(db: Path) -> dict[str, dict]:
    done = brainlab("usage", "models", "--db", str(db), "--json", "--timezone", "UTC",
                    cwd=db.parent)
    assert done.returncode == 0, done.stderr
    return {r["model"]: r for r in json.loads(done.stdout)}


def _fast(u: dict) -> dict:
    return {**u, "speed": "fast"}


def test_fast_mode_is_priced_at_its_rate_and_shown_apart(tmp_path):
    db = ingest(tmp_path, [
        assistant(S1, "2026-02-21T10:00:00.000Z", "m1", "r1", usage(inp=1000, out=1000),
                  model="claude-opus-4-6"),
        assistant(S1, "2026-02-21T10:01:00.000Z", "m2", "r2",
                  _fast(usage(inp=1000, out=1000, cr=10000)), model="claude-opus-4-6")])
    rows = models(db)
    standard = (1000 * 5.0 + 1000 * 25.0) / 1e6
    fast = 6 * (1000 * 5.0 + 1000 * 25.0 + 10000 * 0.5) / 1e6  # Opus 4.6 fast mode: 6x
    assert rows["claude-opus-4-6"]["cost_usd"] == pytest.approx(standard)
    # JSON names it as the peers do (issue 45 rule 7: ccusage's `-fast` suffix)
    assert rows["claude-opus-4-6-fast"]["cost_usd"] == pytest.approx(fast)
    assert rows["claude-opus-4-6-fast"]["requests"] == 1
    text = subprocess.run([sys.executable, "-m", "brainlab.cli", "usage", "models", "--db",
                           str(db)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})
    assert "claude-opus-4-6 (fast)" in text.stdout and "-fast" not in text.stdout


def test_a_call_is_priced_at_the_rate_in_force_on_its_day(tmp_path):
    """Sonnet 4.6 long context (input side over 200k): 2x input side and 1.5x output for
    the whole request before 2026-03-13, standard rates from that day."""
    big = usage(inp=10, out=1000, cr=250_000)
    db = ingest(tmp_path, [
        assistant(S1, "2026-03-12T23:00:00.000Z", "m1", "r1", big, model="claude-sonnet-4-6"),
        assistant(S1, "2026-03-13T01:00:00.000Z", "m2", "r2", big, model="claude-sonnet-4-6")])
    done = brainlab("usage", "daily", "--db", str(db), "--json", "--timezone", "UTC",
                    cwd=tmp_path)
    days = {r["day"]: r["cost_usd"] for r in json.loads(done.stdout)}
    standard = (10 * 3.0 + 1000 * 15.0 + 250_000 * 0.3) / 1e6
    long_context = (10 * 3.0 * 2 + 1000 * 15.0 * 1.5 + 250_000 * 0.3 * 2) / 1e6
    assert days == {"2026-03-12": pytest.approx(long_context),
                    "2026-03-13": pytest.approx(standard)}


def test_the_claude_3_family_is_priced(tmp_path):
    db = ingest(tmp_path, [
        assistant(S1, "2024-06-01T10:00:00.000Z", "m1", "r1", usage(inp=1000, out=1000),
                  model="claude-3-opus-20240229"),
        assistant(S1, "2024-06-01T10:01:00.000Z", "m2", "r2", usage(inp=1000, out=1000),
                  model="claude-3-haiku-20240307"),
        assistant(S1, "2024-11-01T10:01:00.000Z", "m3", "r3", usage(inp=1000, out=1000),
                  model="claude-3-5-sonnet-20241022"),
        assistant(S1, "2024-06-01T10:02:00.000Z", "m4", "r4", usage(inp=1000, out=1000),
                  model="claude-3-sonnet-20240229")])
    rows = models(db)
    assert {m: (r["priced_as"], r["cost_usd"]) for m, r in rows.items()} == {
        "claude-3-opus-20240229": ("claude-3-opus", pytest.approx(0.09)),
        "claude-3-haiku-20240307": ("claude-3-haiku", pytest.approx(0.0015)),
        "claude-3-5-sonnet-20241022": ("claude-3-5-sonnet", pytest.approx(0.018)),
        "claude-3-sonnet-20240229": ("claude-3-sonnet", pytest.approx(0.018))}


def test_prices_lists_the_table_and_the_unpriced_models(tmp_path):
    db = ingest(tmp_path, [
        assistant(S1, "2026-05-01T10:00:00.000Z", "m1", "r1", usage(inp=7, out=3),
                  model="claude-mystery-9"),
        assistant(S1, "2026-05-01T10:01:00.000Z", "m2", "r2", usage(inp=7, out=3),
                  model="claude-opus-4-5-20251101")])
    text = brainlab("prices", "--db", str(db), cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "claude-3-opus" in text.stdout and "claude-sonnet-4-6" in text.stdout
    assert "claude-mystery-9: 1 calls, 10 tokens" in text.stdout
    report = json.loads(brainlab("prices", "--db", str(db), "--json", cwd=tmp_path).stdout)
    assert all(row["source"] for row in report["prices"])
    assert all(row["source_date"] for row in report["prices"]
               if row["prices_file"] == "brainlab/data/prices.toml")
    sonnet = [(r["valid_from"], r["valid_until"]) for r in report["prices"]
              if r["model"] == "claude-sonnet-4-6"]
    assert sonnet == [("2026-03-13", None), (None, "2026-03-13")]
    assert report["unpriced"] == [{"model": "claude-mystery-9", "requests": 1,
                                   "total_tokens": 10}]


def test_overlapping_price_rows_are_one_line_error(tmp_path):
    bad = tmp_path / "prices.toml"
    bad.write_text("[[prices]]\nmodel = 'x'\ninput = 1\noutput = 1\ncache_write_5m = 1\n"
                   "cache_read = 1\nvalid_until = 2026-03-01\n\n[[prices]]\nmodel = 'x'\n"
                   "input = 2\noutput = 2\ncache_write_5m = 2\ncache_read = 2\n"
                   "valid_from = 2026-02-01\n")
    done = brainlab("prices", "--prices", str(bad), "--db", str(tmp_path / "none.duckdb"),
                    cwd=tmp_path)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        f"Error: {bad.resolve()}: model 'x' has two price rows in force on 2026-02-01 (give"
        " each row valid_from / valid_until days that do not overlap)"]
