"""``brainlab ingest otel`` (issue 26): OTLP files as the collector writes them, from real calls.

The calls are the real corpus's (shared/corpora/claude-code, deduplicated by the transcript
ingest); the files are written the way the collector's file exporter writes them: JSON lines
rotated by renaming, delta and cumulative metrics, length-prefixed proto and zstd.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import orjson
import pytest
import zstandard

from brainlab.otel import export
from brainlab.otel.ingest import ingest_otel_db
from brainlab.store import open_writer
from brainlab.store.connection import rows as read_rows
from brainlab.transcripts.ingest import ingest_claude
from tests.conftest import CORPUS

TOTALS = ("SELECT count(*), sum(input_tokens), sum(output_tokens), sum(cache_creation_tokens),"
          " sum(cache_read_tokens) FROM cc_requests")


def run_cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd=cwd,
                          capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=300)


def ingest(path: Path, db: Path) -> None:
    """``brainlab ingest otel PATH --db DB``'s library call, in this process: for the tests
    whose subject is what the files decode to, not the command (its output is checked by
    the first two tests; an interpreter each cost ~0.4 CPU-s, issue 28 item 1)."""
    ingest_otel_db(db, [path])


def rows(db: Path, sql: str, params=None):
    """The rows of ``sql`` on ``db``, read-only: the run's corpus store is shared by both
    workers, where a writer's connection would lock the other out."""
    return read_rows(db, sql, params)[1]


@pytest.fixture(scope="module")
def corpus_calls(corpus_store) -> list[export.Call]:
    """Every deduplicated transcript call of the corpus that has a request id."""
    found = rows(corpus_store, "SELECT session_id, request_id, model, ts, input_tokens,"
                 " output_tokens, cache_read_tokens, cache_creation_tokens, cost_usd"
                 " FROM cc_requests WHERE request_id IS NOT NULL ORDER BY ts, request_id")
    return [export.Call(s, r, m, ts, i, o, cr, cc, c or 0.0) for s, r, m, ts, i, o, cr, cc, c
            in found]


def teammate(calls: list[export.Call], n: int = 40) -> list[export.Call]:
    """Calls of a teammate's machine: seen in telemetry only."""
    return [export.Call("teammate-session", f"req_teammate_{i}", c.model,
                        c.ts + timedelta(seconds=1), c.input_tokens, c.output_tokens,
                        c.cache_read_tokens, c.cache_creation_tokens, c.cost_usd,
                        user_email="mate@example.com", query_source="sdk",
                        agent_name="reviewer" if i % 2 else None)
            for i, c in enumerate(calls[:n])]


def write_collector_folder(folder: Path, calls: list[export.Call]) -> Path:
    """Logs rotated once (JSON lines), delta metrics, cumulative metrics as zstd proto frames."""
    requests = export.logs_requests(calls, batch=40)
    half = len(requests) // 2
    export.write_json_lines(folder / "logs-2026-11-30T10-00-00.000.json", requests[:half])
    export.write_json_lines(folder / "logs.json", requests[half:])
    export.write_json_lines(folder / "metrics.json", export.metrics_requests(calls))
    export.write_framed(folder / "metrics-cumulative.pb",
                        export.metrics_requests(calls, cumulative=True), proto=True, zstd=True)
    export.write_framed(folder / "traces.pb", export.spans_requests(calls[:30]), proto=True)
    return folder


def totals(db: Path, where: str = "") -> tuple:
    return rows(db, TOTALS + (f" WHERE {where}" if where else ""))[0]


def test_every_call_counted_once_across_transcripts_and_telemetry(corpus_store, corpus_calls,
                                                                  tmp_path):
    db = tmp_path / "store.duckdb"
    shutil.copy(corpus_store, db)
    before = totals(db)
    mates = teammate(corpus_calls)
    folder = write_collector_folder(tmp_path / "otel", corpus_calls + mates)
    done = run_cli("ingest", "otel", str(folder), "--db", str(db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "5 read" in done.stdout
    # the corpus calls are in both sources: each still counted once, from its transcript
    assert totals(db, "source = 'transcript'") == before
    mate = totals(db, "source = 'otel'")
    assert mate[0] == len(mates)
    assert mate[1] == sum(c.input_tokens for c in mates)
    assert totals(db)[0] == before[0] + len(mates)
    # every usage view and the stored roll-up include the telemetry-only calls
    daily = rows(db, "SELECT sum(requests), sum(input_tokens) FROM usage_daily")[0]
    assert daily == (before[0] + len(mates), before[1] + mate[1])
    rollup = rows(db, "SELECT sum(requests) FROM cc_usage_rollup")[0][0]
    assert rollup == before[0] + len(mates)
    # the transcript row keeps its message id and cache split
    kept = rows(db, "SELECT count(*) FROM cc_requests WHERE source = 'transcript'"
                " AND message_id IS NULL AND request_id IS NOT NULL")[0][0]
    assert kept == rows(corpus_store, "SELECT count(*) FROM cc_requests WHERE message_id IS NULL"
                        " AND request_id IS NOT NULL")[0][0]
    # who spent it: the teammate's calls by user and agent
    who = dict(rows(db, "SELECT user_name, sum(requests) FROM usage_who GROUP BY ALL"))
    assert who["mate@example.com"] == len(mates)
    listed = run_cli("usage-who", "--by", "user", "--json", "--db", str(db), cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    by_user = {r["user"]: r for r in orjson.loads(listed.stdout)}
    assert by_user["mate@example.com"]["requests"] == len(mates)
    assert by_user["mate@example.com"]["sources"] == "otel"
    assert sum(r["requests"] for r in by_user.values()) == before[0] + len(mates)


def test_rotation_reingest_and_order_give_the_same_totals(corpus_store, corpus_calls, tmp_path):
    calls = corpus_calls[:400] + teammate(corpus_calls, 10)
    folder = write_collector_folder(tmp_path / "otel", calls)
    first = tmp_path / "first.duckdb"  # telemetry first, then the transcripts
    con = open_writer(first)
    try:
        from brainlab.otel.ingest import discover, ingest_otel

        summary = ingest_otel(con, discover([folder]))
        assert summary.read == 5 and summary.errors == 0
        ingest_claude(con, CORPUS, workers=1)
    finally:
        con.close()
    second = tmp_path / "second.duckdb"  # transcripts first
    shutil.copy(corpus_store, second)
    ingest(folder, second)
    assert totals(first) == totals(second)
    assert rows(first, "SELECT sum(requests), round(sum(cost_usd), 6) FROM cc_usage_rollup"
                ) == rows(first, "SELECT count(*), round(sum(cost_usd), 6) FROM cc_requests")
    # the collector rotates logs.json and starts a new one; a second run reads only that
    snapshot = totals(second)
    (folder / "logs.json").rename(folder / "logs-2026-11-30T11-00-00.000.json")
    more = teammate(corpus_calls[400:], 5)
    for i, call in enumerate(more):
        call.request_id = f"req_rotated_{i}"
    export.write_json_lines(folder / "logs.json", export.logs_requests(more))
    again = run_cli("ingest", "otel", str(folder), "--db", str(second), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("otel 1 read, 5 unchanged, 1 renamed"), again.stdout
    assert totals(second)[0] == snapshot[0] + len(more)
    third = run_cli("ingest", "otel", str(folder), "--db", str(second), cwd=tmp_path)
    assert third.stdout.startswith("otel 0 read, 6 unchanged"), third.stdout
    assert totals(second)[0] == snapshot[0] + len(more)


def test_grown_file_is_read_from_its_offset_and_a_cut_line_waits(tmp_path, corpus_calls):
    db = tmp_path / "s.duckdb"
    path = tmp_path / "logs.json"
    requests = export.logs_requests(corpus_calls[:60], batch=20)
    export.write_json_lines(path, requests[:2])
    line = orjson.dumps(requests[2])
    with open(path, "ab") as handle:
        handle.write(line[:50])  # the collector is writing this line
    ingest(path, db)
    assert rows(db, "SELECT count(*) FROM otel_events")[0][0] == 40
    assert rows(db, "SELECT count(*) FROM ingest_errors")[0][0] == 0
    with open(path, "ab") as handle:
        handle.write(line[50:] + b"\n")
    ingest(path, db)
    assert rows(db, "SELECT count(*), count(DISTINCT request_id) FROM otel_events")[0] == (60, 60)


def test_json_proto_and_zstd_files_give_the_same_rows(tmp_path, corpus_calls):
    calls = corpus_calls[:80]
    logs, metrics = export.logs_requests(calls), export.metrics_requests(calls, cumulative=True)
    spans = export.spans_requests(calls)
    stores = {}
    for name, write in (
            ("json", lambda d, r: export.write_json_lines(d / f"{r[0]}.json", r[1])),
            ("proto", lambda d, r: export.write_framed(d / f"{r[0]}.pb", r[1])),
            ("proto-zstd", lambda d, r: export.write_framed(d / f"{r[0]}.pb", r[1], zstd=True)),
            ("json-zstd", lambda d, r: export.write_framed(d / f"{r[0]}.bin", r[1], proto=False,
                                                          zstd=True))):
        folder = tmp_path / name
        for signal in (("logs", logs), ("metrics", metrics), ("traces", spans)):
            write(folder, signal)
        db = tmp_path / f"{name}.duckdb"
        ingest(folder, db)
        stores[name] = rows(db, "SELECT (SELECT list(request_id || input_tokens || cost_usd"
                            " ORDER BY request_id) FROM otel_events), (SELECT list(span_id ||"
                            " trace_id || ttft_ms ORDER BY span_id) FROM otel_spans),"
                            " (SELECT sum(value) FROM otel_metric_intervals),"
                            " (SELECT count(*) FROM ingest_errors)")[0]
    # the native-compression layout: the whole file one zstd stream of JSON lines
    stream = tmp_path / "stream"
    stream.mkdir()
    for signal, requests in (("logs", logs), ("metrics", metrics), ("traces", spans)):
        text = b"".join(orjson.dumps(r) + b"\n" for r in requests)
        (stream / f"{signal}.json.zst").write_bytes(zstandard.ZstdCompressor().compress(text))
    db = tmp_path / "stream.duckdb"
    ingest(stream, db)
    stores["stream"] = rows(db, "SELECT (SELECT list(request_id || input_tokens || cost_usd"
                            " ORDER BY request_id) FROM otel_events), (SELECT list(span_id ||"
                            " trace_id || ttft_ms ORDER BY span_id) FROM otel_spans),"
                            " (SELECT sum(value) FROM otel_metric_intervals),"
                            " (SELECT count(*) FROM ingest_errors)")[0]
    first = stores["json"]
    assert len(first[0]) == 80 and len(first[1]) == 80 and first[3] == 0
    for name, found in stores.items():
        assert found == first, name


def test_delta_and_cumulative_metrics_agree_with_the_calls(tmp_path, corpus_calls):
    calls = corpus_calls[:300]
    for name, cumulative in (("delta", False), ("cumulative", True)):
        db = tmp_path / f"{name}.duckdb"
        folder = tmp_path / name
        export.write_json_lines(folder / "logs.json", export.logs_requests(calls))
        export.write_json_lines(folder / "metrics.json",
                                export.metrics_requests(calls, cumulative=cumulative))
        # the same points exported again by a second exporter, as proto: counted once
        export.write_framed(folder / "metrics-copy.pb",
                            export.metrics_requests(calls, cumulative=cumulative))
        ingest(folder, db)
        metric, call = rows(db, "SELECT sum(metric_input_tokens + metric_cache_read_tokens),"
                            " sum(call_input_tokens + call_cache_read_tokens)"
                            " FROM otel_usage_check")[0]
        assert metric == call == sum(c.input_tokens + c.cache_read_tokens for c in calls)
        check = run_cli("usage-check", "--db", str(db), cwd=tmp_path)
        assert check.returncode == 0, check.stderr
        assert "agree" in check.stdout, check.stdout


def test_usage_check_names_the_disagreement(tmp_path, corpus_calls):
    calls = corpus_calls[:100]
    folder = tmp_path / "otel"
    export.write_json_lines(folder / "logs.json", export.logs_requests(calls[:-5]))  # 5 lost
    export.write_json_lines(folder / "metrics.json", export.metrics_requests(calls))
    db = tmp_path / "s.duckdb"
    ingest(folder, db)
    check = run_cli("usage-check", "--db", str(db), cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    lost = {c.session_id for c in calls[-5:]}
    assert any(session[:8] in check.stdout for session in lost), check.stdout
    assert "disagree" in check.stdout


def test_metrics_are_the_usage_of_a_session_without_events(tmp_path, corpus_calls):
    calls = teammate(corpus_calls, 30)  # a teammate who exports metrics only
    folder = tmp_path / "otel"
    export.write_json_lines(folder / "metrics.json", export.metrics_requests(calls,
                                                                             cumulative=True))
    db = tmp_path / "s.duckdb"
    ingest(folder, db)
    found = rows(db, "SELECT sum(input_tokens), sum(output_tokens), sum(cache_read_tokens),"
                 " sum(cache_creation_tokens) FROM cc_requests WHERE source = 'otel-metrics'")[0]
    assert found == (sum(c.input_tokens for c in calls), sum(c.output_tokens for c in calls),
                     sum(c.cache_read_tokens for c in calls),
                     sum(c.cache_creation_tokens for c in calls))
    assert rows(db, "SELECT sum(input_tokens) FROM usage_daily")[0][0] == found[0]
    check = run_cli("usage-check", "--db", str(db), cwd=tmp_path)
    assert "metrics" in check.stdout and "teammate" in check.stdout, check.stdout
    # once the session's events arrive, the metrics stop standing in for its calls
    export.write_json_lines(folder / "logs.json", export.logs_requests(calls))
    ingest(folder, db)
    assert rows(db, "SELECT count(*) FROM cc_requests WHERE source = 'otel-metrics'") == [(0,)]
    assert rows(db, "SELECT count(*), sum(input_tokens) FROM cc_requests") == [
        (len(calls), found[0])]
    assert "agree" in run_cli("usage-check", "--db", str(db), cwd=tmp_path).stdout
