"""The weekly report's rate-limit section and the digest, on a real store (issue 25)."""

from __future__ import annotations

import calendar
import json
import time
from datetime import date

from conftest import seeded_cache

from brainlab.live import cache, digest, spool
from brainlab.metrics.report import Week
from brainlab.report import sections
from brainlab.store.schema import open_writer


def snapshots(folder, rows):
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / cache.LIMITS_NAME, "w") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def test_limits_section_charts_the_weeks_windows(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINLAB_CACHE_DIR", str(seeded_cache(tmp_path / "cache")))
    db = tmp_path / "s.duckdb"
    con = open_writer(db)
    con.close()
    ctx = sections.ReportContext(db=db, week=Week.parse("2026-W10"), thresholds=None)
    assert sections.limits(ctx) == ""  # no snapshot ever: no section
    start = calendar.timegm((2026, 3, 3, 10, 0, 0))  # Tuesday 2026-03-03 10:00 UTC
    snapshots(tmp_path / "cache" / "live", [
        {"ts": start + 60 * i, "session_id": "s", "five_hour_pct": 10.0 * i,
         "five_hour_resets_at": start + 4 * 3600, "seven_day_pct": 30 + i,
         "seven_day_resets_at": start + 5 * 86400} for i in range(4)])
    con = open_writer(db)
    assert spool.load_limits(con) == 4
    assert spool.load_limits(con) == 0  # taken
    con.close()
    html = sections.limits(ctx)
    assert '<section class="report-section" id="limits">' in html
    assert 'data-chart="limit-use"' in html and "<svg" in html
    assert html.count("<tr>") >= 3  # header + the 5h and the 7d windows
    other = sections.ReportContext(db=db, week=Week.of(date(2026, 5, 4)), thresholds=None)
    assert "No rate-limit window this week" in sections.limits(other)


def test_digest_reads_todays_cost_per_session_from_the_store(tmp_path):
    from claude_factory import assistant, usage

    from brainlab.transcripts.ingest import ingest_claude

    now = time.time()
    ts = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now))
    path = tmp_path / "projects" / "p" / "sess-d.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(assistant("sess-d", ts, "m1", "r1",
                                         usage(1_000_000, 0, 0, 0))) + "\n")
    db = tmp_path / "s.duckdb"
    con = open_writer(db)
    ingest_claude(con, tmp_path / "projects")
    value, running = digest.collect(con, now)
    con.close()
    assert running is None
    assert value["day"] == time.strftime("%Y-%m-%d", time.gmtime(now))
    assert value["sessions"] == {"sess-d": 5.0}  # 1M input tokens of Opus 4.5 at $5/M
    assert digest.build(db, now)["sessions"] == value["sessions"]
