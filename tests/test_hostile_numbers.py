"""Issue 47 item 1: every numeric field of every source is range-checked at ingest.

One store gets the worst value of each type (INT64_MIN/MAX, -1, 2^63, 1e23, NaN, ±Infinity,
1e308, -0.0) in each numeric field of each source: transcripts (usage counts, advisor
iterations, costUSD, timestamps, a compaction's preTokens), telemetry (api_request tokens,
cost, durations, counts, times; metric points' values, counts and times; spans' tokens and
times) and the status line's limit snapshots. Each out-of-range value is an error row naming
file and line and is not stored; the good rows of the same files load; then every read
command runs on the store and exits 0 with no traceback.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from claude_factory import advisor, assistant, usage, write
from click.testing import CliRunner
from conftest import TEMPLATE_BRAIN, seeded_cache

from brainlab.cli import main
from brainlab.otel import vocab
from brainlab.spec import ranges
from brainlab.store import open_writer

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# the worst value of each type, as the number itself (JSON text below writes NaN/Infinity)
WORST = [INT64_MIN, INT64_MAX, -1, 2**63, 1e23, math.nan, math.inf, -math.inf, 1e308]
DAY = datetime(2026, 11, 30, 10, 0)
SESSION = "9f0c1e2a-0000-4000-8000-000000000047"
NANOS = str(int(DAY.replace(tzinfo=UTC).timestamp()) * 10**9)


def nano_text(value) -> str:
    """A worst value as OTLP *UnixNano text (the spec writes 64-bit integers as strings)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return str(int(value)) if isinstance(value, int) else repr(value)


def otlp_value(value) -> dict:
    """A worst value as an OTLP/JSON AnyValue: ints as intValue text, floats as doubleValue
    (non-finite ones as the "NaN"/"Infinity" strings protobuf's JSON mapping uses)."""
    if isinstance(value, int):
        return {"intValue": str(value)}
    if not math.isfinite(value):
        return {"doubleValue": nano_text(value)}
    return {"doubleValue": value}


def event(attrs: dict, time_nanos: str = NANOS) -> bytes:
    base = {"session.id": {"stringValue": SESSION},
            "model": {"stringValue": "claude-sonnet-4-5-20250929"}}
    return orjson.dumps({"resourceLogs": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "claude-code"}}]}, "scopeLogs": [{
            "logRecords": [{"timeUnixNano": time_nanos,
                            "body": {"stringValue": "claude_code.api_request"},
                            "attributes": [{"key": k, "value": v}
                                           for k, v in {**base, **attrs}.items()]}]}]}]})


def metric_point(point: dict) -> bytes:
    return orjson.dumps({"resourceMetrics": [{"resource": {"attributes": []}, "scopeMetrics": [{
        "metrics": [{"name": "claude_code.token.usage", "unit": "tokens", "sum": {
            "aggregationTemporality": 1, "isMonotonic": True, "dataPoints": [{
                "startTimeUnixNano": NANOS, "timeUnixNano": NANOS,
                "attributes": [{"key": "session.id", "value": {"stringValue": SESSION}},
                               {"key": "type", "value": {"stringValue": "input"}}],
                **point}]}}]}]}]})


def span(attrs: dict, start: str = NANOS, end: str = NANOS) -> bytes:
    return orjson.dumps({"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{
        "spans": [{"traceId": "0" * 31 + "1", "spanId": "0" * 15 + "1", "name": "chat",
                   "startTimeUnixNano": start, "endTimeUnixNano": end,
                   "attributes": [{"key": "gen_ai.request.model",
                                   "value": {"stringValue": "gpt-4o"}},
                                  *({"key": k, "value": v} for k, v in attrs.items())]}]}]}]})


def telemetry_lines() -> tuple[list[bytes], int]:
    """Hostile telemetry lines and how many values in them are out of range."""
    numeric = [key for key, (_column, kind) in vocab.EVENT.items() if kind != "VARCHAR"
               and kind != "BOOLEAN"]
    lines, bad = [event({"request_id": {"stringValue": "req_good"},
                         "input_tokens": {"intValue": "10"}, "cost_usd": {"doubleValue": 0.5}})], 0
    for key in numeric:
        for value in WORST:
            lines.append(event({key: otlp_value(value)}))
            bad += 1
    for value in WORST:  # the record's own time, a metric point's value, count and times
        lines.append(event({}, time_nanos=nano_text(value)))
        lines.append(metric_point({"asDouble": nano_text(value) if isinstance(value, float)
                                   and not math.isfinite(value) else value}))
        lines.append(metric_point({"asInt": str(value) if isinstance(value, int)
                                   else nano_text(value)}))
        lines.append(metric_point({"asInt": "5", "timeUnixNano": nano_text(value)}))
        lines.append(span({"gen_ai.usage.input_tokens": otlp_value(value)}))
        lines.append(span({}, start=nano_text(value), end=nano_text(value)))
    return lines, bad


def transcript_lines() -> list:
    """Assistant lines with a worst value in each usage field, costUSD, timestamp, iterations."""
    ts = DAY.isoformat() + ".000Z"
    lines = [assistant(SESSION, ts, "msg_good", "req_tgood", usage(10, 20, 30, 40))]
    fields = ["input_tokens", "output_tokens", "cache_creation_input_tokens",
              "cache_read_input_tokens"]
    n = 0
    for value in WORST + [-0.0]:
        for field in fields:
            n += 1
            u = usage(1, 1, 1, 1)
            u[field] = value
            lines.append(assistant(SESSION, ts, f"msg_{n:04d}", f"req_{n:04d}", u))
        n += 1
        u = usage(1, 1, 2, 1)
        u["cache_creation"] = {"ephemeral_5m_input_tokens": value, "ephemeral_1h_input_tokens": 1}
        lines.append(assistant(SESSION, ts, f"msg_{n:04d}", f"req_{n:04d}", u))
        n += 1
        u = usage(1, 1, 1, 1)
        u["iterations"] = [advisor(inp=value, out=1)]
        lines.append(assistant(SESSION, ts, f"msg_{n:04d}", f"req_{n:04d}", u))
        n += 1
        lines.append(assistant(SESSION, ts, f"msg_{n:04d}", f"req_{n:04d}", usage(1, 1),
                               costUSD=value))
        lines.append({"type": "system", "subtype": "compact_boundary", "sessionId": SESSION,
                      "timestamp": ts, "compactMetadata": {"trigger": "auto",
                                                           "preTokens": value}})
    for n, stamp in enumerate(["0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z",
                               "9999-12-31T23:59:59Z", "2999-01-01T00:00:00.000Z",
                               "9999-12-31T23:59:59+14:00"]):
        lines.append(assistant(SESSION, stamp, f"msg_ts{n}", f"req_ts{n}", usage(1, 1)))
    return [json.dumps(line).encode() for line in lines]  # json writes NaN and Infinity


def snapshot_lines() -> list[bytes]:
    """Status line limit snapshots with a worst value in each number (an older status line)."""
    now = DAY.replace(tzinfo=UTC).timestamp()
    keys = ["five_hour_pct", "five_hour_resets_at", "seven_day_pct", "seven_day_resets_at",
            "context_used_pct", "context_window_size", "total_cost_usd", "total_input_tokens",
            "total_output_tokens"]
    lines = [{"ts": now, "session_id": SESSION, "context_window_size": 200000,
              "context_used_pct": 12.5}]
    for i, value in enumerate(WORST + [-1e308, -0.0]):
        lines.append({"ts": value, "session_id": f"s-ts-{i}"})
        for key in keys:
            lines.append({"ts": now + i * 60 + keys.index(key), "session_id": f"s-{i}",
                          key: value})
    return [json.dumps(line).encode() for line in lines]


BRAIN_WORST = ["-9223372036854775808", "9223372036854775807", "-1", "9223372036854775808",
               "1e23", "nan", "inf", "-inf", "1e308", "-0.0"]


def brain_files(brain: Path) -> None:
    """Metabolism logs, claims and circuit events with a worst value in each number."""
    fields = ["tokens_used", "context_peak_pct", "context_at_close", "duration_min", "commits",
              "todos_closed", "health_score", "kernel_files_touched", "adrs_written",
              "insights_captured"]
    for i, value in enumerate(BRAIN_WORST):
        day = f"2026-11-{10 + i:02d}"
        sess = f"sess-202611{10 + i:02d}-0900-work"
        rows = "".join(f"| {field} | {value} |\n" for field in fields)
        (brain / "progression" / "metabolism").mkdir(parents=True, exist_ok=True)
        (brain / "progression" / "metabolism" / f"{day}-{sess}.md").write_text(
            f"# Metabolism — {day} — {sess}\n\n| Clé | Valeur |\n|---|---|\n| type | work |\n"
            + rows)
        (brain / "claims").mkdir(exist_ok=True)
        (brain / "claims" / f"{sess}.yml").write_text(
            f'sess_id: {sess}\nstatus: open\nopened_at: "{day}T09:00"\nttl_hours: {value}\n')
    (brain / "circuits").mkdir(exist_ok=True)
    (brain / "circuits" / "hostile.jsonl").write_text("".join(
        json.dumps({"ticket": f"T{i}", "ts": "2026-11-20T10:00:00Z", "event": "session",
                    "agent": "x", "tokens": float(value) if "e" in value or "n" in value
                    else int(float(value)) if "." in value else int(value)}) + "\n"
        for i, value in enumerate(BRAIN_WORST)))


@pytest.fixture(scope="module")
def hostile_store(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("hostile_numbers")
    cache = seeded_cache(root / "cache")
    (cache / "live").mkdir(parents=True, exist_ok=True)
    (cache / "live" / "limit_snapshots.jsonl").write_bytes(b"\n".join(snapshot_lines()) + b"\n")
    project = root / "projects" / "-home-u-projets-alpha"
    write(project / f"{SESSION}.jsonl", transcript_lines())
    otel_lines, bad = telemetry_lines()
    otel = root / "otel.jsonl"
    otel.write_bytes(b"\n".join(otel_lines) + b"\n")
    db = root / "s.duckdb"
    brain_files(root / "brain")
    env = {"BRAINLAB_CACHE_DIR": str(cache), "COLUMNS": "100"}
    results = {name: CliRunner().invoke(main, args, env=env) for name, args in (
        ("brain", ["ingest", "brain", str(root / "brain"), "--db", str(db)]),
        ("claude", ["ingest", "claude", str(root / "projects"), "--db", str(db)]),
        ("otel", ["ingest", "otel", str(otel), "--db", str(db)]))}
    return {"db": db, "env": env, "ingest": results, "otel": otel, "bad_otel": bad,
            "transcript": project / f"{SESSION}.jsonl"}


def query(db: Path, sql: str):
    con = open_writer(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_out_of_range_values_are_error_rows_and_good_rows_load(hostile_store):
    db = hostile_store["db"]
    for name, result in hostile_store["ingest"].items():
        assert result.exit_code == 0, (name, result.output, result.exception)
    # telemetry: every bad value of every api_request number is one error row naming the line
    otel = str(hostile_store["otel"])
    found = query(db, "SELECT count(*) FROM ingest_errors WHERE source = 'otel' AND file = '"
                  + otel + "' AND severity = 'error' AND reason LIKE '%spec/ranges.py%'"
                  " AND line IS NOT NULL")[0][0]
    assert found >= hostile_store["bad_otel"]
    assert query(db, "SELECT input_tokens, cost_usd FROM otel_events"
                 " WHERE request_id = 'req_good'") == [(10, 0.5)]
    lo, hi = ranges.TOKENS.low, ranges.TOKENS.high
    for table, columns in (("otel_events", ["input_tokens", "output_tokens", "cache_read_tokens",
                                            "cache_creation_tokens", "pre_tokens",
                                            "post_tokens"]),
                           ("otel_spans", ["input_tokens", "output_tokens"]),
                           ("cc_request_lines", ["input_tokens", "output_tokens", "cache_creation_tokens",
                                                 "cache_read_tokens", "cache_creation_1h_tokens",
                                                 "cache_creation_5m_tokens"]),
                           ("cc_compactions", ["pre_tokens"])):
        for column in columns:
            assert query(db, f"SELECT count(*) FROM {table} WHERE {column} NOT BETWEEN {lo}"
                         f" AND {hi}")[0][0] == 0, (table, column)
    assert query(db, "SELECT count(*) FROM otel_events WHERE NOT isfinite(cost_usd) OR"
                 f" cost_usd NOT BETWEEN 0 AND {ranges.COST_USD.high} OR NOT isfinite(duration_ms)"
                 " OR duration_ms < 0")[0][0] == 0
    assert query(db, "SELECT count(*) FROM otel_metric_points WHERE NOT isfinite(value)"
                 f" OR abs(value) > {ranges.METRIC_VALUE.high} OR count < 0")[0][0] == 0
    for table, column in (("otel_events", "ts"), ("otel_metric_points", "ts"),
                          ("otel_metric_points", "start_ts"), ("otel_spans", "start_ts"),
                          ("cc_request_lines", "ts"), ("limit_snapshots", "snapshot_at"),
                          ("limit_snapshots", "five_hour_resets_at")):
        assert query(db, f"SELECT count(*) FROM {table} WHERE {column} < DATE '2020-01-01'"
                     f" OR {column} > now()::TIMESTAMP + INTERVAL 45 DAY")[0][0] == 0, column
    # transcripts: the good call and the in-range values load; the bad values are error rows
    transcript = str(hostile_store["transcript"])
    rows = query(db, "SELECT line, reason FROM ingest_errors WHERE file = '" + transcript
                 + "' AND severity = 'error'")
    assert len(rows) >= 8 * 9 and all("spec/ranges.py" in r for _, r in rows), rows[:5]
    assert query(db, "SELECT input_tokens, output_tokens FROM cc_request_lines"
                 " WHERE request_id = 'req_tgood'") == [(10, 20)]
    assert query(db, "SELECT count(*) FROM cc_request_lines WHERE NOT isfinite(reported_cost_usd)"
                 f" OR reported_cost_usd NOT BETWEEN 0 AND {ranges.COST_USD.high}")[0][0] == 0
    # limit snapshots: each bad number an error row; the good snapshot and the others' rest kept
    assert query(db, "SELECT context_window_size, context_used_pct FROM limit_snapshots"
                 f" WHERE session_id = '{SESSION}'") == [(200000, 12.5)]
    limits = query(db, "SELECT count(*) FROM ingest_errors WHERE source = 'limits'")[0][0]
    assert limits >= 9 * 10
    # brain files: every number within its range or NULL
    assert query(db, "SELECT count(*) FROM raw_metabolism_logs")[0][0] == len(BRAIN_WORST)
    for column, bound in (("tokens_used", ranges.SESSION_TOKENS),
                          ("context_peak_pct", ranges.PERCENT), ("duration_min", ranges.MINUTES),
                          ("health_score", ranges.SCORE), ("commits", ranges.SMALL_COUNT)):
        assert query(db, f"SELECT count(*) FROM raw_metabolism_logs WHERE NOT"
                     f" isfinite({column}::DOUBLE) OR {column} < {bound.low}"
                     f" OR {column} > {bound.high}")[0][0] == 0, column
    assert query(db, "SELECT count(*) FROM claims WHERE NOT isfinite(ttl_hours)"
                 f" OR ttl_hours < 0 OR ttl_hours > {ranges.HOURS.high}")[0][0] == 0
    assert query(db, "SELECT count(*) FROM circuit_events WHERE tokens < 0"
                 f" OR tokens > {ranges.SESSION_TOKENS.high}")[0][0] == 0
    assert query(db, "SELECT count(*) FROM limit_snapshots WHERE NOT isfinite(five_hour_pct)"
                 " OR five_hour_pct NOT BETWEEN 0 AND 1000 OR context_window_size < 0"
                 " OR total_cost_usd < 0 OR NOT isfinite(total_cost_usd)"
                 " OR total_input_tokens < 0")[0][0] == 0


READS = [
    ["usage"], ["usage", "weekly"], ["usage", "monthly"], ["usage", "sessions"],
    ["usage", "models"], ["usage", "blocks"], ["usage", "projects"], ["usage", "agents"],
    ["usage", "tickets"], ["usage", "branches"], ["usage", "tools"], ["usage", "total"],
    ["usage", "limits"], ["usage", "check"], ["usage", "reconcile"],
    ["usage", "--by", "user,model,session,source"], ["usage", "daily", "--json"],
    ["usage", "blocks", "--csv"], ["usage-who"], ["usage-check"], ["limits"], ["errors"],
    ["trends"], ["trends", "--daily", "--json"],
]


def test_every_read_command_works_on_the_store(hostile_store, tmp_path):
    db = str(hostile_store["db"])
    failed = []
    for args in READS + [["check", str(TEMPLATE_BRAIN)],
                         ["check", str(hostile_store["db"].parent / "brain")]]:
        result = CliRunner().invoke(main, [*args, "--db", db], env=hostile_store["env"])
        allowed = (0, 1) if args[0] == "check" else (0,)  # check: 1 on a brain finding
        if result.exit_code not in allowed or "Traceback" in result.output or (
                result.exception and not isinstance(result.exception, SystemExit)):
            failed.append((args, result.exit_code, result.output[-300:], result.exception))
    assert not failed, failed
    from brainlab.live import digest
    value = digest.build(db)
    assert isinstance(value, dict)
    report = CliRunner().invoke(main, ["report", "weekly", "--db", db, "--week", "2026-W49",
                                       "--out", str(tmp_path / "reports")],
                                env=hostile_store["env"])
    assert report.exit_code == 0 and "Traceback" not in report.output, report.output[-2000:]


def test_every_numeric_telemetry_column_has_a_range():
    for mapping in (vocab.EVENT, vocab.SPAN, vocab.POINT, vocab.COMMON):
        for column, kind in mapping.values():
            if kind in ("BIGINT", "DOUBLE"):
                assert column in vocab.COLUMN_RANGES, column


def test_a_store_an_older_release_filled_is_repaired_by_the_next_ingest(tmp_path):
    """Rows stored before the ranges existed: a read is one Error line (never exit 70) until
    the next writer moves each bad value to ingest_errors; then every read works."""
    db = tmp_path / "old.duckdb"
    con = open_writer(db)  # a copy of the empty store: no repair ran on it yet
    try:
        con.execute("DELETE FROM brainlab_meta WHERE key = 'ranges_checked'")
        for i, (inp, cost) in enumerate([(INT64_MIN, 1.0), (INT64_MIN, float("inf")),
                                         (INT64_MAX, float("nan")), (5, 0.5)]):
            con.execute("INSERT INTO cc_request_lines (session_id, request_id, message_id, model,"
                        " ts, input_tokens, output_tokens, reported_cost_usd, source_file, line)"
                        " VALUES ('s1', ?, ?, 'claude-sonnet-4-5-20250929',"
                        " TIMESTAMP '2026-11-30 10:00:00', ?, ?, ?, 'old.jsonl', ?)",
                        [f"req_{i}", f"msg_{i}", inp, inp, cost, i + 1])
        con.execute("INSERT INTO otel_events (file_key, line, record, event_name, ts,"
                    " input_tokens, cost_usd, source_file) VALUES ('k', 1, 0, 'api_request',"
                    " TIMESTAMP '2026-11-30 10:00:00', ?, ?, 'old-otel.json'), ('k', 2, 0,"
                    " 'api_request', TIMESTAMP '50000-01-01 00:00:00', 1, 0.1, 'old-otel.json')",
                    [INT64_MIN, float("-inf")])
        con.execute("DELETE FROM brainlab_meta WHERE key = 'cc_usage_rollup'")
    finally:
        con.close()
    before = CliRunner().invoke(main, ["usage", "--db", str(db)])
    assert before.exit_code == 1 and "Traceback" not in before.output, before.output
    assert before.output.startswith("Error: ") and "run an ingest" in before.output
    con = open_writer(db)  # what any ingest does first
    try:
        moved = con.execute("SELECT count(*) FROM ingest_errors WHERE reason LIKE"
                            " 'stored by an older brainlab%'").fetchone()[0]
        assert moved >= 8
        assert con.execute("SELECT count(*) FROM cc_request_lines WHERE input_tokens < 0"
                           " OR NOT isfinite(reported_cost_usd)").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM cc_request_lines").fetchone()[0] == 4
        assert con.execute("SELECT count(*) FROM otel_events WHERE year(ts) > 9999"
                           " OR NOT isfinite(cost_usd)").fetchone()[0] == 0
    finally:
        con.close()
    for args in (["usage"], ["usage", "daily", "--json"], ["usage", "sessions"], ["usage-who"],
                 ["errors"]):
        result = CliRunner().invoke(main, [*args, "--db", str(db)])
        assert result.exit_code == 0 and "Traceback" not in result.output, (args, result.output)
