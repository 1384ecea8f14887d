"""Write OTLP files as the collector's file exporter does, from calls (synth, tests, benchmark).

Claude Code's telemetry of a list of API calls: ``claude_code.api_request`` events (one log
record each, standard attributes on the record), ``claude_code.token.usage`` and
``claude_code.cost.usage`` metric points per session and model (delta or cumulative), and
``claude_code.llm_request`` spans with ``ttft_ms``. Output formats: JSON lines (one export
request per line), and length-prefixed proto or JSON messages, each optionally zstd.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson


@dataclass
class Call:
    """One API call as Claude Code's telemetry describes it."""

    session_id: str
    request_id: str | None
    model: str
    ts: datetime
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: float = 0.0
    duration_ms: float = 1000.0
    user_email: str = "dev@example.com"
    organization_id: str = "org-1"
    query_source: str | None = "repl_main_thread"
    agent_name: str | None = None
    skill_name: str | None = None
    speed: str | None = None


def nanos(ts: datetime) -> str:
    """A datetime (naive = UTC) as OTLP *UnixNano text."""
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return str(int(ts.timestamp() * 1_000_000) * 1000)


def attr(key: str, value) -> dict:
    """One OTLP/JSON attribute: ints as intValue strings, floats as doubleValue."""
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def _resource(version: str = "2.1.0") -> dict:
    return {"attributes": [attr("service.name", "claude-code"),
                           attr("service.version", version), attr("os.type", "linux")]}


def event_record(call: Call, sequence: int = 0) -> dict:
    """The log record of one ``claude_code.api_request`` event."""
    attrs = {"event.name": "api_request", "event.timestamp": call.ts.isoformat(),
             "event.sequence": sequence, "session.id": call.session_id,
             "user.email": call.user_email, "organization.id": call.organization_id,
             "model": call.model, "cost_usd": float(call.cost_usd),
             "duration_ms": float(call.duration_ms), "input_tokens": call.input_tokens,
             "output_tokens": call.output_tokens, "cache_read_tokens": call.cache_read_tokens,
             "cache_creation_tokens": call.cache_creation_tokens}
    for key, value in (("request_id", call.request_id), ("query_source", call.query_source),
                       ("agent.name", call.agent_name), ("skill.name", call.skill_name),
                       ("speed", call.speed)):
        if value is not None:
            attrs[key] = value
    return {"timeUnixNano": nanos(call.ts), "observedTimeUnixNano": nanos(call.ts),
            "severityNumber": 9, "body": {"stringValue": "claude_code.api_request"},
            "attributes": [attr(k, v) for k, v in attrs.items()]}


def logs_requests(calls: Sequence[Call], batch: int = 50) -> list[dict]:
    """ExportLogsServiceRequest dicts, ``batch`` events each (one line each)."""
    out = []
    for start in range(0, len(calls), batch):
        records = [event_record(c, start + i) for i, c in enumerate(calls[start:start + batch])]
        out.append({"resourceLogs": [{"resource": _resource(), "scopeLogs": [
            {"scope": {"name": "com.anthropic.claude_code.events"}, "logRecords": records}]}]})
    return out


def metrics_requests(calls: Sequence[Call], cumulative: bool = False,
                     interval_s: int = 60) -> list[dict]:
    """token.usage and cost.usage points per export interval, session, model (and type).

    Delta: each point is the interval's sum. Cumulative: each point is the running total of
    its series since the series' start time (as the SDK exports it).
    """
    if not calls:
        return []
    ordered = sorted(calls, key=lambda c: c.ts)
    start_ns = int(nanos(ordered[0].ts)) - 1_000_000_000
    buckets: dict[int, list[Call]] = defaultdict(list)
    for call in ordered:
        buckets[(int(nanos(call.ts)) - start_ns) // (interval_s * 1_000_000_000)].append(call)
    totals: dict[tuple, float] = defaultdict(float)
    out = []
    for bucket in sorted(buckets):
        end_ns = start_ns + (bucket + 1) * interval_s * 1_000_000_000
        begin_ns = start_ns if cumulative else end_ns - interval_s * 1_000_000_000
        sums: dict[tuple, float] = defaultdict(float)
        for c in buckets[bucket]:
            base = (c.session_id, c.model, c.user_email)
            for kind, value in (("input", c.input_tokens), ("output", c.output_tokens),
                                ("cacheRead", c.cache_read_tokens),
                                ("cacheCreation", c.cache_creation_tokens)):
                sums[("claude_code.token.usage",) + base + (kind,)] += value
            sums[("claude_code.cost.usage",) + base + (None,)] += c.cost_usd
        metrics: dict[str, list] = defaultdict(list)
        for key, value in sums.items():
            totals[key] += value
            name, session, model, email, kind = key
            attrs = [attr("session.id", session), attr("user.email", email),
                     attr("model", model)] + ([attr("type", kind)] if kind else [])
            number = totals[key] if cumulative else value
            point = {"attributes": attrs, "startTimeUnixNano": str(begin_ns),
                     "timeUnixNano": str(end_ns)}
            if name == "claude_code.cost.usage":
                point["asDouble"] = number
            else:
                point["asInt"] = str(int(number))
            metrics[name].append(point)
        out.append({"resourceMetrics": [{"resource": _resource(), "scopeMetrics": [{
            "scope": {"name": "com.anthropic.claude_code"},
            "metrics": [{"name": name, "unit": "USD" if "cost" in name else "tokens",
                         "sum": {"dataPoints": points, "aggregationTemporality":
                                 2 if cumulative else 1, "isMonotonic": True}}
                        for name, points in sorted(metrics.items())]}]}]})
    return out


def spans_requests(calls: Sequence[Call], batch: int = 50) -> list[dict]:
    """``claude_code.llm_request`` spans with ``ttft_ms`` (one trace per call)."""
    out = []
    for start in range(0, len(calls), batch):
        spans = []
        for i, c in enumerate(calls[start:start + batch], start):
            begin = int(nanos(c.ts)) - int(c.duration_ms * 1_000_000)
            spans.append({"traceId": f"{i + 1:032x}", "spanId": f"{i + 1:016x}",
                          "name": "claude_code.llm_request", "kind": 3,
                          "startTimeUnixNano": str(begin), "endTimeUnixNano": nanos(c.ts),
                          "attributes": [attr("session.id", c.session_id),
                                         attr("model", c.model),
                                         attr("ttft_ms", round(c.duration_ms / 4, 1)),
                                         attr("input_tokens", c.input_tokens),
                                         attr("output_tokens", c.output_tokens)]})
        out.append({"resourceSpans": [{"resource": _resource(), "scopeSpans": [
            {"scope": {"name": "com.anthropic.claude_code.tracing"}, "spans": spans}]}]})
    return out


def write_json_lines(path: str | os.PathLike, requests: Iterable[dict]) -> Path:
    """One OTLP/JSON export request per line (the exporter's default ``format: json``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as handle:
        for request in requests:
            handle.write(orjson.dumps(request) + b"\n")
    return path


def to_proto(request: dict) -> bytes:
    """An OTLP/JSON request dict as protobuf bytes (ids hex in JSON, bytes in proto)."""
    import base64

    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    if "resourceSpans" in request:
        request = orjson.loads(orjson.dumps(request))
        for resource in request["resourceSpans"]:
            for scope in resource.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if span.get(key):
                            span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
        message = ExportTraceServiceRequest()
    elif "resourceMetrics" in request:
        message = ExportMetricsServiceRequest()
    else:
        message = ExportLogsServiceRequest()
    return json_format.ParseDict(request, message).SerializeToString()


def write_framed(path: str | os.PathLike, requests: Iterable[dict], proto: bool = True,
                 zstd: bool = False) -> Path:
    """Length-prefixed messages (``format: proto``, or JSON with ``compression: zstd``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as handle:
        for request in requests:
            data = to_proto(request) if proto else orjson.dumps(request)
            if zstd:
                import zstandard

                data = zstandard.ZstdCompressor().compress(data)
            handle.write(len(data).to_bytes(4, "big") + data)
    return path
