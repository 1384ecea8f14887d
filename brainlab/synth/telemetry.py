"""The telemetry the synthetic sessions would have produced (issue 26): real OTLP JSON files.

Read back from the synthetic transcripts (``<out>/claude``), each API call becomes a
``claude_code.api_request`` event with its request id, each tool call a ``tool_result``
event with its duration, each compaction boundary a ``compaction`` event; a planted teammate
(``mate@example.com``) has calls seen only in telemetry, every 25th call is preceded by a
retried ``api_error``, and permission waits are ``blocked_on_user`` spans. Written as the
collector's file exporter writes them: ``<out>/telemetry/logs.json`` rotated once into
``logs-<time>.json``, delta metrics in ``metrics.json``, spans in ``traces.json``.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path

import orjson

from brainlab.otel import export
from brainlab.synth.files import BrainFiles

USER = "you@example.com"
MATE = "mate@example.com"


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)


def _read(files: BrainFiles):
    """(calls, tool runs, compactions) of the transcripts under ``claude/``, in file order."""
    calls: dict[str, export.Call] = {}
    tools: dict[str, tuple[str, str, datetime]] = {}
    runs, compactions = [], []
    for path in files.under("claude", ".jsonl"):
        for raw in files.text(path).splitlines():
            line = json.loads(raw)
            at = _when(line["timestamp"]) if line.get("timestamp") else None
            message = line.get("message") or {}
            usage = message.get("usage") if isinstance(message, dict) else None
            if line.get("type") == "assistant" and usage and line.get("requestId"):
                calls[line["requestId"]] = export.Call(
                    line["sessionId"], line["requestId"], message.get("model", ""), at,
                    usage.get("input_tokens", 0), usage.get("output_tokens", 0),
                    usage.get("cache_read_input_tokens", 0),
                    usage.get("cache_creation_input_tokens", 0), user_email=USER,
                    agent_name=line.get("agentId") and "subagent",
                    query_source="subagent" if line.get("agentId") else "repl_main_thread")
                for block in message.get("content") or []:
                    if block.get("type") == "tool_use":
                        tools[block["id"]] = (line["sessionId"], block["name"], at)
            elif line.get("type") == "user" and isinstance(message.get("content"), list):
                for block in message["content"]:
                    if block.get("type") == "tool_result" and block.get("tool_use_id") in tools:
                        session, name, started = tools.pop(block["tool_use_id"])
                        runs.append((session, name, started, at))
            elif line.get("subtype") == "compact_boundary":
                meta = line.get("compactMetadata") or {}
                compactions.append((line.get("sessionId"), at, meta.get("trigger", "auto"),
                                    meta.get("preTokens")))
    return list(calls.values()), runs, compactions


def _event(name: str, at: datetime, session: str, user: str, **attrs) -> dict:
    values = {"event.name": name, "session.id": session, "user.email": user,
              "organization.id": "org-demo", **{k: v for k, v in attrs.items() if v is not None}}
    return {"timeUnixNano": export.nanos(at), "observedTimeUnixNano": export.nanos(at),
            "severityNumber": 9, "body": {"stringValue": f"claude_code.{name}"},
            "attributes": [export.attr(k, v) for k, v in values.items()]}


def write_telemetry(out_dir: Path, rng: random.Random) -> list[dict]:
    """Write ``<out_dir>/telemetry`` from ``<out_dir>/claude``; return the planted effects."""
    root = Path(out_dir)
    files = BrainFiles()
    for path in sorted((root / "claude").rglob("*.jsonl")):
        files.put(path.relative_to(root).as_posix(), path.read_text(encoding="utf-8"))
    claude = set(files)
    planted = telemetry_files(files, rng)
    for relative in claude:
        files.remove(relative)
    files.write(root)
    return planted


def _otlp(requests: list[dict]) -> str:
    """One OTLP/JSON export request per line, as the collector's file exporter writes them."""
    return "".join(orjson.dumps(r).decode("utf-8") + "\n" for r in requests)


def telemetry_files(files: BrainFiles, rng: random.Random) -> list[dict]:
    """``telemetry/`` from the transcripts under ``claude/``; return the planted effects."""
    calls, runs, compactions = _read(files)
    if not calls:
        return []
    mates = [export.Call(f"teammate-{i // 20:03d}", f"req_mate_{i:05d}", c.model,
                         c.ts + timedelta(minutes=7), c.input_tokens, c.output_tokens,
                         c.cache_read_tokens, c.cache_creation_tokens, user_email=MATE,
                         organization_id="org-demo", query_source="sdk")
             for i, c in enumerate(c for c in calls if rng.random() < 0.05)]
    everything = sorted(calls + mates, key=lambda c: c.ts)
    records = []
    for i, call in enumerate(everything):
        call.duration_ms = float(rng.randint(2_000, 40_000))
        if i % 25 == 0:  # a retried overload before the call that went through
            for attempt in (1, 2):
                records.append(_event("api_error", call.ts - timedelta(seconds=30 - attempt),
                                      call.session_id, call.user_email, model=call.model,
                                      error="Overloaded", status_code="529", attempt=attempt,
                                      duration_ms=float(rng.randint(200, 900))))
        record = export.event_record(call, i)
        record["attributes"].append(export.attr("ttft_ms", round(call.duration_ms / 5, 1)))
        records.append(record)
    for session, name, started, ended in runs:
        records.append(_event("tool_result", ended, session, USER, tool_name=name,
                              success=True,
                              duration_ms=float(max((ended - started).total_seconds(), 0) * 1000)))
    for session, at, trigger, before in compactions:
        records.append(_event("compaction", at, session, USER, trigger=trigger,
                              pre_tokens=before, post_tokens=before // 8 if before else None))
    records.sort(key=lambda r: int(r["timeUnixNano"]))
    batches = [{"resourceLogs": [{"resource": {"attributes": [
        export.attr("service.name", "claude-code"), export.attr("service.version", "2.1.0")]},
        "scopeLogs": [{"scope": {"name": "com.anthropic.claude_code.events"},
                       "logRecords": records[i:i + 100]}]}]}
        for i in range(0, len(records), 100)]
    half = len(batches) // 2
    first = everything[0].ts.strftime("%Y-%m-%dT%H-%M-%S.000")
    files.put(f"telemetry/logs-{first}.json", _otlp(batches[:half]))  # rotated
    files.put("telemetry/logs.json", _otlp(batches[half:]))
    files.put("telemetry/metrics.json", _otlp(export.metrics_requests(everything, False, 300)))
    waits = [(c, rng.randint(1_000, 60_000)) for c in calls if rng.random() < 0.1]
    spans = export.spans_requests(everything)
    spans.append({"resourceSpans": [{"resource": {"attributes": [
        export.attr("service.name", "claude-code")]}, "scopeSpans": [{"spans": [
            {"traceId": f"{0xB10C + i:032x}", "spanId": f"{0xB10C + i:016x}",
             "name": "claude_code.tool.blocked_on_user", "kind": 1,
             "startTimeUnixNano": export.nanos(c.ts),
             "endTimeUnixNano": export.nanos(c.ts + timedelta(milliseconds=wait)),
             "attributes": [export.attr("session.id", c.session_id)]}
            for i, (c, wait) in enumerate(waits)]}]}]})
    files.put("telemetry/traces.json", _otlp(spans))
    return [{"effect": "telemetry", "where": "telemetry/",
             "what": f"{len(calls)} calls as api_request events, {len(mates)} calls of"
                     f" {MATE} seen only in telemetry, {len(everything[::25])} retried"
                     f" api_errors, {len(waits)} permission waits"}]


_TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")


def price_requests(out_dir: Path, costs: dict[str, float]) -> int:
    """Give each ``api_request`` event of ``<out_dir>/telemetry/logs*.json`` its call's cost.

    Claude Code prices its own calls and reports ``cost_usd``; the synthesis sits below the
    store and its prices, so it writes 0 and the demo hands back ``costs`` (request id ->
    USD, the store's prices of the same calls, ``cc_requests``). A call seen only in
    telemetry (the planted teammate's) takes its model's mean USD per token over the priced
    calls. Returns the events priced. Without it ``usage reconcile`` would flag every
    synthetic session-day on cost.
    """
    folder = Path(out_dir) / "telemetry"
    paths = sorted(folder.glob("logs*.json"))
    loaded = {p: [orjson.loads(line) for line in p.read_bytes().splitlines() if line.strip()]
              for p in paths}
    events = [dict((a["key"], a) for a in record["attributes"])
              for requests in loaded.values() for request in requests
              for resource in request["resourceLogs"] for scope in resource["scopeLogs"]
              for record in scope["logRecords"]]
    events = [e for e in events if e.get("event.name", {}).get("value", {}).get(
        "stringValue") == "api_request"]

    def value(event, key):
        held = event.get(key, {}).get("value", {})
        return held.get("stringValue") or held.get("intValue") or held.get("doubleValue")

    def tokens(event):
        return sum(int(value(event, key) or 0) for key in _TOKEN_KEYS)

    per_token: dict[str, list[float]] = {}
    for event in events:
        cost = costs.get(value(event, "request_id"))
        if cost is not None and tokens(event):
            per_token.setdefault(value(event, "model"), []).append(cost / tokens(event))
    priced = 0
    for event in events:
        cost = costs.get(value(event, "request_id"))
        if cost is None and per_token.get(value(event, "model")):
            rates = per_token[value(event, "model")]
            cost = tokens(event) * sum(rates) / len(rates)
        if cost is not None:
            event["cost_usd"]["value"] = {"doubleValue": round(float(cost), 8)}
            priced += 1
    for path, requests in loaded.items():
        path.write_text(_otlp(requests), encoding="utf-8")
    return priced
