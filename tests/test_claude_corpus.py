"""brainlab's per-day totals on the real transcript corpus equal ccusage 20.0.24's (the oracle).

The fixture is ccusage's own output on the corpus (provenance inside the file). Tokens must be
equal; costs within 1% (SPEC §7 prices; docs/transcripts.md explains any difference).
"""

import json
import os
from pathlib import Path

import pytest
from conftest import CORPUS as SHARED_CORPUS

from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

HERE = Path(__file__).parent
CORPUS = Path(os.environ.get("BRAINLAB_CLAUDE_CORPUS") or SHARED_CORPUS)


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("corpus") / "b.duckdb"
    con = open_writer(db)
    summary = ingest_claude(con, CORPUS)
    yield con, summary
    con.close()


def test_daily_tokens_equal_ccusage_and_costs_within_one_percent(corpus_db):
    con, _ = corpus_db
    oracle = json.loads((HERE / "fixtures" / "ccusage_20.0.24_daily_corpus.json").read_text())
    ours = {str(r[0]): r[1:] for r in con.execute(
        "SELECT day, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens,"
        " cost_usd FROM usage_daily").fetchall()}
    assert set(ours) == {d["date"] for d in oracle["daily"]}
    for day in oracle["daily"]:
        got = ours[day["date"]]
        assert got[:4] == (day["inputTokens"], day["outputTokens"], day["cacheCreationTokens"],
                           day["cacheReadTokens"]), day["date"]
        assert got[4] == pytest.approx(day["totalCost"], rel=0.01), day["date"]


def test_sessions_add_up_to_days_and_nothing_unpriced(corpus_db):
    con, summary = corpus_db
    by_day, by_session, by_model = (con.execute(
        f"SELECT sum(total_tokens), sum(cost_usd) FROM {v}").fetchone()
        for v in ("usage_daily", "usage_sessions", "usage_models"))
    assert by_day[0] == by_session[0] == by_model[0] == 264_580_436  # ccusage totals.totalTokens
    assert by_day[1] == pytest.approx(by_session[1])
    assert summary.unpriced_models == []


def test_glued_lines_are_split_and_reported(corpus_db):
    con, _ = corpus_db
    rows = con.execute("SELECT line, severity FROM ingest_errors WHERE source = 'claude'"
                       " ORDER BY line").fetchall()
    assert rows == [(115, "warning"), (241, "warning")]


def test_second_run_reads_nothing(corpus_db):
    con, _ = corpus_db
    again = ingest_claude(con, CORPUS)
    assert (again.read, again.bytes_read) == (0, 0)
    assert again.unchanged == 29
