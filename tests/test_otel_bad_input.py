"""Bad telemetry input (issue 26 §5): each problem a row naming file and line, never an abort.

Also privacy (content redacted, identities hashed) and other agents' spans (GenAI,
OpenInference) as calls with cached tokens taken out of their input.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import orjson

from brainlab.otel import export
from brainlab.store import open_writer

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a GitHub token shape


def run_cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd=cwd,
                          capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=300)


def rows(db: Path, sql: str):
    con = open_writer(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def call(i: int, **extra) -> export.Call:
    return export.Call("sess-1", f"req_{i}", "claude-sonnet-4-5-20250929",
                       datetime(2026, 11, 30, 10, i), 10, 20, 30, 40, 0.01, **extra)


def log_line(attrs: list[dict], body: str = "claude_code.api_request") -> bytes:
    return orjson.dumps({"resourceLogs": [{"resource": {"attributes": []}, "scopeLogs": [{
        "logRecords": [{"timeUnixNano": "1764496800000000000", "body": {"stringValue": body},
                        "attributes": attrs}]}]}]})


def test_bad_lines_become_rows_and_the_good_rows_load(tmp_path):
    path = tmp_path / "logs.json"
    good = [orjson.dumps(r) for r in export.logs_requests([call(i) for i in range(3)], batch=1)]
    lines = [
        good[0],
        b'{"resourceLogs": [ broken',  # line 2: not JSON
        log_line([{"key": "request_id", "value": {"stringValue": "req_x"}},  # line 3
                  {"key": "input_tokens", "value": {"stringValue": "12"}},
                  {"key": "output_tokens", "value": {"doubleValue": 7.0}},
                  {"key": "cache_read_tokens", "value": {"intValue": 5}},
                  {"key": "cost_usd", "value": {"stringValue": "a lot"}}]),
        log_line([{"key": "huge", "value": {"stringValue": "x" * 100_000}}]),  # line 4
        log_line([], body="claude_code.brand_new_event"),  # line 5
        b"[1, 2]",  # line 6: JSON, not an export request
        b'{"resourceLogs": [{"scopeLogs": [{"logRecords": ["x"]}]}]}',  # line 7: not a record
        good[1],
        good[2],
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    db = tmp_path / "s.duckdb"
    done = run_cli("ingest", "otel", str(path), "--db", str(db), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "3 error(s), 3 warning(s) recorded" in done.stdout, done.stdout
    problems = rows(db, "SELECT line, severity, reason FROM ingest_errors ORDER BY line")
    assert [(line, severity) for line, severity, _ in problems] == [
        (2, "error"), (3, "warning"), (4, "warning"), (5, "warning"), (6, "error"),
        (7, "error")]
    assert "not JSON" in problems[0][2] and "cost_usd" in problems[1][2]
    assert "brand_new_event" in problems[3][2]
    assert rows(db, "SELECT DISTINCT file FROM ingest_errors") == [(str(path),)]
    # numbers as stringValue / doubleValue / intValue all land typed; the bad one is kept aside
    assert rows(db, "SELECT input_tokens, output_tokens, cache_read_tokens, cost_usd"
                " FROM otel_events WHERE request_id = 'req_x'") == [(12, 7, 5, None)]
    assert rows(db, "SELECT value FROM otel_attributes WHERE key = 'cost_usd'") == [("a lot",)]
    assert rows(db, "SELECT length(value) FROM otel_attributes WHERE key = 'huge'") == [(16384,)]
    assert rows(db, "SELECT count(*) FROM otel_events") == [(6,)]
    listed = run_cli("errors", "--db", str(db), cwd=tmp_path)
    assert "logs.json" in listed.stdout


def test_content_is_redacted_and_identities_hashed(tmp_path):
    path = tmp_path / "logs.json"
    path.write_bytes(log_line([
        {"key": "event.name", "value": {"stringValue": "user_prompt"}},
        {"key": "user.email", "value": {"stringValue": "alice@example.com"}},
        {"key": "prompt", "value": {"stringValue": f"deploy with token {SECRET} please"}},
        {"key": "tool_parameters", "value": {"stringValue": f"{{\"cmd\": \"curl -H {SECRET}\"}}"}},
    ], body="claude_code.user_prompt") + b"\n")
    db = tmp_path / "s.duckdb"
    refused = run_cli("ingest", "otel", str(path), "--db", str(db), "--hash-identities",
                      cwd=tmp_path, env={"BRAINLAB_IDENTITY_KEY": ""})
    assert refused.returncode == 1
    assert refused.stderr.startswith("Error: --hash-identities needs a secret key")
    assert "Traceback" not in refused.stderr
    key = {"BRAINLAB_IDENTITY_KEY": "a-team-secret-of-some-length"}
    done = run_cli("ingest", "otel", str(path), "--db", str(db), "--hash-identities",
                   cwd=tmp_path, env=key)
    assert done.returncode == 0, done.stderr
    email, prompt = rows(db, "SELECT user_email, prompt FROM otel_events")[0]
    assert email.startswith("h:") and "alice" not in email
    assert SECRET not in prompt and "[REDACTED:" in prompt
    assert SECRET.encode() not in db.read_bytes()
    assert b"alice@example.com" not in db.read_bytes()


def span(trace: int, attrs: dict, name: str = "chat") -> dict:
    return {"traceId": f"{trace:032x}", "spanId": f"{trace:016x}", "name": name, "kind": 3,
            "startTimeUnixNano": "1764496800000000000", "endTimeUnixNano": "1764496801000000000",
            "attributes": [export.attr(k, v) for k, v in attrs.items()]}


def test_genai_and_openinference_spans_are_calls_without_their_cached_input(tmp_path):
    spans = [
        span(1, {"gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-opus-4-1",
                 "gen_ai.usage.input_tokens": 1000, "gen_ai.usage.output_tokens": 50,
                 "gen_ai.usage.cache_read.input_tokens": 800}),
        span(2, {"llm.provider": "openai", "llm.model_name": "gpt-4o",
                 "llm.token_count.prompt": "300", "llm.token_count.completion": "20",
                 "llm.token_count.prompt_details.cache_read": "100",
                 "openinference.span.kind": "LLM"}),
        span(3, {"http.method": "GET"}, name="GET /"),  # not an LLM call
    ]
    request = {"resourceSpans": [{"resource": {"attributes": [
        export.attr("service.name", "my-agent")]}, "scopeSpans": [{"spans": spans}]}]}
    folder = tmp_path / "traces"
    export.write_framed(folder / "traces.pb", [request])  # proto, as format: proto writes it
    db = tmp_path / "s.duckdb"
    assert run_cli("ingest", "otel", str(folder), "--db", str(db), cwd=tmp_path).returncode == 0
    found = rows(db, "SELECT source, model, input_tokens, cache_read_tokens, output_tokens"
                 " FROM cc_requests ORDER BY source")
    assert found == [("otel-genai", "claude-opus-4-1", 200, 800, 50),
                     ("otel-openinference", "gpt-4o", 200, 100, 20)]
    assert rows(db, "SELECT provider FROM otel_span_calls ORDER BY provider") == [
        ("anthropic",), ("openai",)]
