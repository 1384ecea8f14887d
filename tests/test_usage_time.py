"""Usage in the user's time zone and Claude's 5-hour blocks (issue 24), run as users run them.

The oracle is ccusage 20.0.24 on the real corpus (fixtures with their provenance):
`claude daily --json --offline --timezone ZONE` and `claude blocks --json --offline`. Crafted
transcripts check what the corpus cannot: a call at 23:30 UTC, Sunday weeks, brainlab.toml,
the active block's time left and projection, since/until.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from claude_factory import assistant, progress, usage, write

from brainlab.metrics.usage_blocks import usage_blocks
from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
S1 = "11111111-1111-4111-8111-111111111111"
S2 = "22222222-2222-4222-8222-222222222222"


def brainlab(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """The CLI in a fresh process, from ``cwd`` (as a user types it)."""
    return subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd=cwd,
                          capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=300)


def usage_json(db: Path, *args: str, cwd: Path) -> list[dict]:
    done = brainlab("usage", *args, "--db", str(db), "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def corpus_db(corpus_store) -> Path:
    """The run's store of the corpus, read only (issue 28 item 1: this file ingested the
    corpus into a store of its own, on each worker that ran one of its tests)."""
    return corpus_store


def _assert_days_equal(ours: list[dict], oracle: list[dict], zone: str) -> None:
    got = {r["day"]: r for r in ours}
    assert set(got) == {d["date"] for d in oracle}, zone
    for day in oracle:
        row = got[day["date"]]
        assert (row["input_tokens"], row["output_tokens"], row["cache_creation_tokens"],
                row["cache_read_tokens"]) == (day["inputTokens"], day["outputTokens"],
                                              day["cacheCreationTokens"],
                                              day["cacheReadTokens"]), (zone, day["date"])
        assert row["cost_usd"] == pytest.approx(day["totalCost"], rel=0.01), (zone, day["date"])


def test_daily_per_zone_equals_ccusage_on_the_corpus(corpus_db, tmp_path):
    utc = json.loads((FIXTURES / "ccusage_20.0.24_daily_corpus.json").read_text())["daily"]
    _assert_days_equal(usage_json(corpus_db, "daily", "--timezone", "UTC", cwd=tmp_path),
                       utc, "UTC")
    zones = json.loads((FIXTURES / "ccusage_20.0.24_daily_zones_corpus.json").read_text())
    for zone, days in zones["zones"].items():
        _assert_days_equal(usage_json(corpus_db, "daily", "--timezone", zone, cwd=tmp_path),
                           days, zone)
    # the corpus does move calls across midnight in these zones (else the check is empty)
    assert {d["date"] for d in zones["zones"]["America/Los_Angeles"]} != {
        d["date"] for d in utc}


def test_blocks_equal_ccusage_on_the_corpus(corpus_db, tmp_path):
    """The same windows as ccusage; every field equal once progress-nested calls are left out.

    ccusage's blocks leave out subagent usage nested in progress lines (its daily report
    counts it); brainlab's blocks count every call, so they add up to the days.
    """
    oracle = json.loads((FIXTURES / "ccusage_20.0.24_blocks_corpus.json").read_text())["blocks"]
    ours = usage_json(corpus_db, "blocks", "--timezone", "UTC", cwd=tmp_path)
    assert [(datetime.fromisoformat(b["block_start"]), b["is_gap"]) for b in ours if
            not b["is_gap"]] == [(_iso(b["startTime"]), b["isGap"]) for b in oracle
                                 if not b["isGap"]]
    assert [b["is_gap"] for b in ours] == [b["isGap"] for b in oracle]
    assert not any(b["is_active"] for b in ours)  # the corpus ends in 2026-08
    days = usage_json(corpus_db, "daily", "--timezone", "UTC", cwd=tmp_path)
    assert sum(b["total_tokens"] for b in ours) == sum(d["total_tokens"] for d in days)

    # ccusage counts an API-error line (model <synthetic>: no call, 0 tokens) as an entry
    # when its usage holds no `"iterations": null` (it drops the 4 that do): b00b80af line 23,
    # 86cc3044 line 122, 8e846c14 line 355. brainlab's blocks count no synthetic message.
    synthetic = {"2026-01-14T10:00:00.000Z": 1, "2026-01-19T15:00:00.000Z": 1,
                 "2026-01-26T07:00:00.000Z": 1}
    names, rows, _tz = usage_blocks(corpus_db, timezone="UTC", nested=False)
    like_ccusage = [dict(zip(names, r, strict=True)) for r in rows]
    assert len(like_ccusage) == len(oracle)
    for got, want in zip(like_ccusage, oracle, strict=True):
        assert got["is_gap"] == want["isGap"]
        assert (got["requests"], got["input_tokens"], got["output_tokens"],
                got["cache_creation_tokens"], got["cache_read_tokens"], got["total_tokens"]
                ) == (want["entries"] - synthetic.get(want["id"], 0), *(want["tokenCounts"][k] for k in (
                    "inputTokens", "outputTokens", "cacheCreationInputTokens",
                    "cacheReadInputTokens")), want["totalTokens"]), want["id"]
        assert got["cost_usd"] == pytest.approx(want["costUSD"], rel=0.01, abs=1e-9)
        assert got["models"] == want["models"], want["id"]
        if want["isGap"]:  # from 5 h after the last call to the next call: the kept line of
            # a call is its last streaming copy here, ccusage's first: seconds apart
            assert abs((got["block_start"] - _iso(want["startTime"])).total_seconds()) < 60
            assert abs((got["block_end"] - _iso(want["endTime"])).total_seconds()) < 60
        else:
            assert (got["block_start"], got["block_end"]) == (_iso(want["startTime"]),
                                                              _iso(want["endTime"]))
            assert abs((got["last_call"] - _iso(want["actualEndTime"])).total_seconds()) < 60


def _iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _line(session, ts, msg, out, cwd="/home/u/projets/alpha", model="claude-sonnet-4-6"):
    return assistant(session, ts, msg, "r-" + msg, usage(inp=10, out=out), model=model, cwd=cwd)


@pytest.fixture
def crafted(tmp_path) -> Path:
    """Calls around midnight UTC, on a Saturday and a Sunday, and one nested subagent call."""
    root = tmp_path / "projects"
    write(root / "p" / f"{S1}.jsonl", [
        _line(S1, "2026-03-07T10:00:00.000Z", "m1", 100),  # Saturday
        _line(S1, "2026-03-07T23:30:00.000Z", "m2", 200),  # Sunday 00:30 in Paris
        _line(S1, "2026-03-08T01:00:00.000Z", "m3", 300),  # Sunday
        progress(S1, "2026-03-08T01:10:00.000Z", "a1", "t1", "m4", "r-m4", usage(out=7)),
        _line(S1, "2026-03-08T09:30:00.000Z", "m5", 400),  # 8.5 h later: a new block
        _line(S1, "2026-03-08T10:30:00.000Z", "m6", 600)])
    db = tmp_path / "b.duckdb"
    con = open_writer(db)
    ingest_claude(con, root, workers=1)
    con.close()
    return db


def test_a_call_at_2330_utc_is_the_next_day_in_paris(crafted, tmp_path):
    def by_day(*zone):
        return {r["day"]: r["output_tokens"] for r in usage_json(crafted, "daily", *zone,
                                                                  cwd=tmp_path)}

    assert by_day("--timezone", "UTC") == {"2026-03-07": 300, "2026-03-08": 1307}
    assert by_day("--timezone", "Europe/Paris") == {"2026-03-07": 100, "2026-03-08": 1507}
    # New York moves to summer time on 2026-03-08 at 07:00 UTC
    assert by_day("--timezone", "America/New_York") == {"2026-03-07": 607,
                                                         "2026-03-08": 1000}
    # brainlab.toml's timezone is the default; the option wins over it
    (tmp_path / "brainlab.toml").write_text('timezone = "Europe/Paris"\n')
    assert by_day() == {"2026-03-07": 100, "2026-03-08": 1507}
    assert by_day("--timezone", "UTC") == {"2026-03-07": 300, "2026-03-08": 1307}
    # --since/--until are days of the zone
    assert [r["day"] for r in usage_json(crafted, "daily", "--since", "2026-03-08",
                                         cwd=tmp_path)] == ["2026-03-08"]


def test_the_machine_zone_is_the_default(crafted, tmp_path):
    paris = brainlab("usage", "daily", "--db", str(crafted), "--json", cwd=tmp_path,
                     env={"TZ": "Europe/Paris"})
    assert {r["day"]: r["output_tokens"] for r in json.loads(paris.stdout)} == {
        "2026-03-07": 100, "2026-03-08": 1507}


def test_weeks_start_on_monday_unless_sunday(crafted, tmp_path):
    monday = usage_json(crafted, "weekly", "--timezone", "UTC", cwd=tmp_path)
    assert [(w["week"], w["week_start"], w["output_tokens"]) for w in monday] == [
        ("2026-W10", "2026-03-02", 1607)]
    sunday = usage_json(crafted, "weekly", "--timezone", "UTC", "--start-of-week", "sunday",
                        cwd=tmp_path)
    assert [(w["week_start"], w["output_tokens"]) for w in sunday] == [
        ("2026-03-01", 300), ("2026-03-08", 1307)]


def test_bad_zone_is_one_line_error(crafted, tmp_path):
    done = brainlab("usage", "daily", "--db", str(crafted), "--timezone", "Mars/Olympus",
                    cwd=tmp_path)
    assert done.returncode != 0
    assert done.stderr.strip().startswith("Error: unknown time zone 'Mars/Olympus'")
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_blocks_gap_active_block_and_projection(crafted, tmp_path):
    names, rows, tz = usage_blocks(crafted, timezone="Europe/Paris",
                                   now=datetime(2026, 3, 8, 11, 0, tzinfo=UTC))
    blocks = [dict(zip(names, r, strict=True)) for r in rows]
    assert tz == "Europe/Paris"
    assert [(b["block_start"].isoformat(), b["is_gap"], b["requests"], b["output_tokens"])
            for b in blocks] == [
        ("2026-03-07T11:00:00+01:00", False, 1, 100),  # 10:00 UTC floored to the hour
        ("2026-03-07T16:00:00+01:00", True, 0, 0),  # 5 h after the last call
        ("2026-03-08T00:00:00+01:00", False, 3, 507),  # 23:00 UTC: m2, m3 and nested m4
        ("2026-03-08T07:10:00+01:00", True, 0, 0),
        ("2026-03-08T10:00:00+01:00", False, 2, 1000)]
    assert [b["is_active"] for b in blocks] == [False, False, False, False, True]
    active = blocks[-1]  # 09:00-14:00 UTC, now 11:00 UTC
    assert active["minutes_left"] == 180
    assert active["tokens_per_min"] == pytest.approx(1020 / 60)  # 09:30 to 10:30 UTC
    cost = (20 * 3.0 + 1000 * 15.0) / 1e6  # claude-sonnet-4-6
    assert active["cost_usd"] == pytest.approx(cost)
    assert active["usd_per_hour"] == pytest.approx(cost)
    assert active["projected_tokens"] == 1020 + 17 * 180
    assert active["projected_cost_usd"] == round(cost + cost / 60 * 180, 2)
    assert blocks[2]["minutes_left"] is None and blocks[2]["projected_tokens"] is None
    burned = blocks[2]  # 23:30 to 01:10 UTC: 100 minutes
    assert burned["tokens_per_min"] == pytest.approx((2 * 10 + 507) / 100)
    assert burned["block_end"] - burned["block_start"] == blocks[4]["block_end"] - blocks[4][
        "block_start"]
    # since/until keep the blocks starting on those days of the zone
    _n, kept, _tz = usage_blocks(crafted, since="2026-03-08", timezone="Europe/Paris",
                                 now=datetime(2026, 3, 8, 11, 0, tzinfo=UTC))
    assert len(kept) == 3


def test_blocks_cli_table_and_csv(crafted, tmp_path):
    table = brainlab("usage", "blocks", "--db", str(crafted), "--timezone", "UTC",
                     cwd=tmp_path, env={"COLUMNS": "80"})
    assert table.returncode == 0, table.stderr
    assert "block start" in table.stdout and "gap 3h" in table.stdout
    csv = brainlab("usage", "blocks", "--db", str(crafted), "--timezone", "UTC", "--csv",
                   cwd=tmp_path)
    assert csv.stdout.splitlines()[0].startswith("block_start,block_end,last_call,is_active")
    assert len(csv.stdout.splitlines()) == 1 + 5
