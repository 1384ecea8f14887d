"""One OTLP export request (JSON or proto bytes) into rows of the otel tables, problems as rows.

OTLP/JSON (OTel spec "OTLP/HTTP", JSON encoding) writes 64-bit integers and ``*UnixNano`` as
strings, enums as integers and trace/span ids as hex; a number may also arrive as
``intValue``, ``doubleValue`` or ``stringValue``. Protobuf messages are read with the
``opentelemetry-proto`` package and turned into the same dict shape. Every attribute is kept:
in its typed column (:mod:`vocab`) or as a row of ``otel_attributes``. A value of the wrong
type, a huge value or an unknown Claude Code event is a warning row, never a lost record.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections import defaultdict
from typing import Any

import orjson

from brainlab.otel import vocab
from brainlab.sources.redact import redact, redact_truncate
from brainlab.spec import ranges

_TEMPORALITY = {1: "delta", 2: "cumulative", "AGGREGATION_TEMPORALITY_DELTA": "delta",
                "AGGREGATION_TEMPORALITY_CUMULATIVE": "cumulative"}
_KINDS = ("sum", "gauge", "histogram", "exponentialHistogram", "summary")
_SIGNAL_TABLES = ("otel_events", "otel_metric_points", "otel_spans")
_BOOL = {"true": True, "false": False, "1": True, "0": False}


class Rows:
    """Rows of one file read, one list of dicts per table, and its problem rows."""

    def __init__(self, file_key: str, source_file: str, identity_key: bytes | None = None,
                 max_problems: int = ranges.PROBLEMS_PER_READ):
        self.file_key, self.source_file, self.identity_key = file_key, source_file, identity_key
        self.max_problems, self.dropped = max_problems, 0
        self.tables: dict[str, list[dict]] = defaultdict(list)
        self.problems: list[tuple[int | None, str, str]] = []  # line, reason, severity
        self.line_start: dict[str, int] = {}  # rows per table before the current message
        self.redacted: dict[str, str] = {}  # short strings already redacted in this read
        self.window = ranges.micros_window()  # timestamps kept: spec/ranges.py, one per read

    def problem(self, line: int | None, reason: str, severity: str = "warning") -> None:
        """Record an error (not loaded) or warning (loaded, flagged) of this file.

        Past ``max_problems`` rows only a count is kept: one last row says how many more.
        """
        if len(self.problems) < self.max_problems:
            self.problems.append((line, reason, severity))
            return
        self.dropped += 1
        if self.dropped == 1:
            self.problems.append((None, "", "error"))  # filled by the last call
        self.problems[-1] = (None, f"{self.dropped:,} more problems in this read not recorded"
                             f" (PROBLEMS_PER_READ, spec/ranges.py)", "error")

    def count(self) -> int:
        """Rows of the signal tables (attributes not counted)."""
        return sum(len(v) for k, v in self.tables.items() if k != "otel_attributes")


def decode_message(rows: Rows, line: int, kind: str, data: bytes) -> None:
    """Decode one message into ``rows``; a message that is not OTLP is one error row."""
    if kind == "json":
        try:
            request = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            rows.problem(line, f"line {line}: not JSON ({exc})", "error")
            return
        ids_base64 = False
    else:
        try:
            request = _proto_to_dict(data)
        except Exception as exc:  # noqa: BLE001 - a protobuf decoder failure is this message's
            rows.problem(line, f"message {line}: not an OTLP protobuf message ({exc})", "error")
            return
        ids_base64 = True
    if not isinstance(request, dict):
        rows.problem(line, f"line {line}: a JSON {type(request).__name__}, not an OTLP export"
                     " request", "error")
        return
    rows.line_start = {t: len(rows.tables[t]) for t in _SIGNAL_TABLES}
    found = False
    for key, walk in (("resourceLogs", _logs), ("resourceMetrics", _metrics),
                      ("resourceSpans", _spans)):
        resources = request.get(key)
        if resources is None:
            continue
        found = True
        if not isinstance(resources, list):
            rows.problem(line, f"line {line}: {key} is not a list", "error")
            continue
        for number, resource in enumerate(resources):
            try:
                walk(rows, line, number, resource, ids_base64)
            except (AttributeError, TypeError, ValueError) as exc:
                rows.problem(line, f"line {line}: {key}[{number}] malformed ({exc}); its"
                             " records not loaded", "error")
    if not found:
        rows.problem(line, f"line {line}: no resourceLogs, resourceMetrics or resourceSpans",
                     "error")


# --- attribute values ---------------------------------------------------------------------
def any_value(value: Any) -> Any:
    """An OTLP AnyValue as a Python value (arrays and maps as lists and dicts)."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        raw = value["intValue"]
        try:
            return int(raw)
        except (TypeError, ValueError):
            return raw
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return {kv.get("key"): any_value(kv.get("value"))
                for kv in (value["kvlistValue"] or {}).get("values", [])}
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _attributes(items: Any) -> dict[str, Any]:
    if type(items) is not list:
        return {}
    out = {}
    for kv in items:
        try:  # the usual case first: {"key": str, "value": {"stringValue": ...}}
            key, value = kv["key"], kv["value"]
            plain = value["stringValue"]
        except (TypeError, KeyError):
            if type(kv) is not dict or type(kv.get("key")) is not str:
                continue
            key, value = kv["key"], kv.get("value")
            out[key] = any_value(value)
            continue
        if type(key) is str:
            out[key] = plain if len(value) == 1 else any_value(value)
    return out


def _typed(value: Any, kind: str) -> Any:
    """``value`` as the column type, or raise ValueError."""
    if value is None:
        return None
    exact = type(value)
    if (kind == "BIGINT" and exact is int and -(2 ** 63) <= value < 2 ** 63) or (
            kind == "VARCHAR" and exact is str):
        return value
    if kind == "DOUBLE" and (exact is float or exact is int):
        return float(value)
    if kind == "VARCHAR":
        return value if isinstance(value, str) else orjson.dumps(value).decode()
    if kind == "BOOLEAN":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in _BOOL:
            return _BOOL[value.lower()]
        raise ValueError
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError
    if kind == "DOUBLE":
        return float(value)
    number = float(value) if isinstance(value, str) and not value.lstrip("-").isdigit() else value
    if isinstance(number, float):
        if not number.is_integer():
            raise ValueError
        number = int(number)
    number = int(number)
    if not -(2 ** 63) <= number < 2 ** 63:
        raise ValueError
    return number


def _numeric(value: Any) -> bool:
    """True for a number, or a string that reads as one (``"1e23"``, ``"NaN"``)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    if isinstance(value, str) and len(value) < 400:
        try:
            float(value)
        except ValueError:
            return False
        return True
    return False


def _text(value: str, key: str, rows: Rows, line: int) -> str:
    """A string as stored: content redacted and cut, any huge value cut with a warning."""
    if key in vocab.CONTENT_KEYS:
        return redact_truncate(value, vocab.CONTENT_LIMIT)
    if len(value) > vocab.MAX_VALUE_CHARS:
        rows.problem(line, f"line {line}: attribute {key!r} has {len(value):,} characters;"
                     f" kept its first {vocab.MAX_VALUE_CHARS:,}")
        value = value[:vocab.MAX_VALUE_CHARS]
    if len(value) > 200:
        return redact(value)
    done = rows.redacted.get(value)  # models, sessions, users repeat on every record
    if done is None:
        if len(rows.redacted) > 50_000:  # unique ids (request ids) would only fill it
            rows.redacted.clear()
        done = rows.redacted[value] = redact(value)
    return done


def _fill(rows: Rows, line: int, record: int, signal: str, row: dict, attrs: dict,
          mapping: dict, level: str = "record") -> None:
    """Put each attribute in its typed column (``mapping``: key -> column), or in otel_attributes."""
    side = rows.tables["otel_attributes"]
    filled: set[str] = set()  # a record's attribute overrides its resource's, not a sibling
    for key, value in attrs.items():
        target = mapping.get(key)
        if target is not None and target[0] not in filled:
            filled.add(target[0])
            column, kind = target
            if kind == "VARCHAR" and type(value) is str and column not in vocab.IDENTITY_COLUMNS:
                row[column] = _text(value, key, rows, line)  # the usual case, shortest path
                continue
            try:
                typed = _typed(value, kind)
            except (ValueError, OverflowError):
                bound = vocab.COLUMN_RANGES.get(column)
                if bound is not None and _numeric(value):  # 2^63, 1e23, NaN, inf: a number
                    rows.problem(line, f"line {line}: {signal} attribute {key!r}:"
                                 f" {str(value)[:40]} is not a whole number in"
                                 f" {bound.low}..{bound.high:g} ({bound.name}, spec/ranges.py);"
                                 " not stored", "error")
                    continue
                rows.problem(line, f"line {line}: {signal} attribute {key!r} = {str(value)[:60]!r}"
                             f" is not a {kind}; kept in otel_attributes")
            else:
                bound = vocab.COLUMN_RANGES.get(column)
                if bound is not None and typed is not None and (
                        problem := bound.problem(typed)):
                    rows.problem(line, f"line {line}: {signal} attribute {key!r}: {problem}"
                                 f" ({bound.name}, spec/ranges.py); not stored", "error")
                    continue
                if kind == "VARCHAR" and typed is not None:
                    typed = _text(typed, key, rows, line)
                    if column in vocab.IDENTITY_COLUMNS and rows.identity_key:
                        typed = hash_identity(rows.identity_key, typed)
                row[column] = typed
                continue
        text = value if isinstance(value, str) else orjson.dumps(value).decode()
        if key in ("user.email", "user.id", "user.account_uuid") and rows.identity_key:
            text = hash_identity(rows.identity_key, text)
        side.append({"file_key": rows.file_key, "line": line, "record": record,
                     "signal": signal, "level": level, "key": key,
                     "value": _text(text, key, rows, line)})


def hash_identity(key: bytes, value: str) -> str:
    """A keyed hash of a user or email (``--hash-identities``): same input, same hash."""
    return "h:" + hmac.new(key, value.encode(), hashlib.sha256).hexdigest()[:24]


def _ts(nanos: Any, rows: Rows | None = None, line: int = 0, what: str = "") -> int | None:
    """``*UnixNano`` (string or number) as microseconds since the epoch; 0 or junk is None.

    A time outside the window of spec/ranges.py (2020 to the run plus a few days) is None
    and, given ``rows``, an error row naming the field: it is not stored.
    """
    try:
        value = int(nanos)
    except (TypeError, ValueError, OverflowError):
        return None
    if value <= 0:
        return None
    micros = value // 1000
    if rows is not None and not rows.window[0] <= micros <= rows.window[1]:
        rows.problem(line, f"line {line}: {what} {str(nanos)[:30]} ns is outside the time window"
                     f" ({ranges.EARLIEST:%Y-%m-%d} to {ranges.FUTURE_DAYS} days after the run,"
                     " spec/ranges.py); not stored", "error")
        return None
    return micros


def _resource(rows: Rows, line: int, number: int, resource: dict, signal: str) -> dict:
    """Typed columns a resource gives every record; its other attributes once, as rows."""
    attrs = _attributes((resource.get("resource") or {}).get("attributes"))
    base: dict = {}
    rest = {k: v for k, v in attrs.items() if k not in vocab.COMMON}
    _fill(rows, line, number, signal, base, {k: v for k, v in attrs.items() if k in vocab.COMMON},
          vocab.COMMON)
    if rest:
        _fill(rows, line, number, signal, {}, rest, {}, level="resource")
    return base


# --- the three signals ----------------------------------------------------------------------
def _logs(rows: Rows, line: int, number: int, resource: dict, _ids: bool) -> None:
    base = _resource(rows, line, number, resource, "event")
    out = rows.tables["otel_events"]
    record = len(out) - rows.line_start["otel_events"]
    for scope in resource.get("scopeLogs") or []:
        for log in scope.get("logRecords") or []:
            if not isinstance(log, dict):
                rows.problem(line, f"line {line}: a log record that is not an object", "error")
                continue
            attrs = _attributes(log.get("attributes"))
            body = any_value(log.get("body"))
            name = attrs.pop("event.name", None)
            if not isinstance(name, str):
                name = body if isinstance(body, str) and body.startswith("claude_code.") else None
            short = name[len("claude_code."):] if name and name.startswith("claude_code.") else name
            observed = _ts(log.get("observedTimeUnixNano"), rows, line, "observedTimeUnixNano")
            row = {**base, "file_key": rows.file_key, "line": line, "record": record,
                   "event_name": short, "ts": _ts(log.get("timeUnixNano"), rows, line,
                                                 "timeUnixNano") or observed,
                   "observed_ts": observed,
                   "severity": log.get("severityText") or None,
                   "body": None if body is None or body == name
                   else _text(body if isinstance(body, str) else orjson.dumps(body).decode(),
                              "body", rows, line),
                   "source_file": rows.source_file}
            attrs.pop("event.timestamp", None)  # the record's own time says it
            _fill(rows, line, record, "event", row, attrs, vocab.EVENT_ALL)
            if short and short not in vocab.KNOWN_EVENTS and (
                    name.startswith("claude_code.") or row.get("service_name") == "claude-code"):
                rows.problem(line, f"line {line}: unknown Claude Code event {short!r}; kept")
            out.append(row)
            record += 1


def _metrics(rows: Rows, line: int, number: int, resource: dict, _ids: bool) -> None:
    base = _resource(rows, line, number, resource, "point")
    resource_key = orjson.dumps(sorted(_attributes((resource.get("resource") or {})
                                                   .get("attributes")).items()), default=str)
    out = rows.tables["otel_metric_points"]
    record = len(out) - rows.line_start["otel_metric_points"]
    for scope in resource.get("scopeMetrics") or []:
        for metric in scope.get("metrics") or []:
            if not isinstance(metric, dict):
                rows.problem(line, f"line {line}: a metric that is not an object", "error")
                continue
            name = metric.get("name")
            kind = next((k for k in _KINDS if k in metric), None)
            if kind is None:
                rows.problem(line, f"line {line}: metric {name!r} has no data points kind")
                continue
            data = metric[kind] or {}
            temporality = _TEMPORALITY.get(data.get("aggregationTemporality"))
            for point in data.get("dataPoints") or []:
                if not isinstance(point, dict):
                    rows.problem(line, f"line {line}: metric {name!r}: a data point that is not"
                                 " an object", "error")
                    continue
                attrs = _attributes(point.get("attributes"))
                if kind in ("sum", "gauge"):
                    raw = point.get("asDouble", point.get("asInt"))
                    count = None
                else:
                    raw, count = point.get("sum"), point.get("count")
                try:
                    value = _typed(raw, "DOUBLE")
                    count = _typed(count, "BIGINT")
                except (ValueError, OverflowError):
                    rows.problem(line, f"line {line}: metric {name!r}: value {str(raw)[:40]!r}"
                                 " is not a number; point kept without value")
                    value = count = None
                for what, number, bound in (("value", value, ranges.METRIC_VALUE),
                                            ("count", count, ranges.COUNT)):
                    if number is not None and (problem := bound.problem(number)):
                        rows.problem(line, f"line {line}: metric {name!r}: {what} {problem}"
                                     f" ({bound.name}, spec/ranges.py); point kept without"
                                     " value", "error")
                        value = count = None
                series = hashlib.md5(orjson.dumps([name, resource_key, sorted(attrs.items())],
                                                  default=str)).hexdigest()
                row = {**base, "file_key": rows.file_key, "line": line, "record": record,
                       "metric": name, "unit": metric.get("unit") or None, "kind": kind,
                       "temporality": temporality,
                       "is_monotonic": bool(data.get("isMonotonic")) if kind == "sum" else None,
                       "start_ts": _ts(point.get("startTimeUnixNano"), rows, line,
                                       "startTimeUnixNano"),
                       "ts": _ts(point.get("timeUnixNano"), rows, line, "timeUnixNano"),
                       "value": value, "count": count,
                       "series_key": series, "source_file": rows.source_file}
                _fill(rows, line, record, "point", row, attrs, vocab.POINT_ALL)
                out.append(row)
                record += 1


def _hex(value: Any, ids_base64: bool) -> str | None:
    if not value:
        return None
    if ids_base64:
        return base64.b64decode(value).hex()
    return str(value).lower()


def _convention(name: str | None, attrs: dict) -> str | None:
    if name and name.startswith("claude_code."):
        return "claude_code"
    if any(k.startswith("gen_ai.") for k in attrs):
        return "gen_ai"
    if any(k.startswith(("llm.", "openinference.")) for k in attrs):
        return "openinference"
    return None


def _spans(rows: Rows, line: int, number: int, resource: dict, ids_base64: bool) -> None:
    base = _resource(rows, line, number, resource, "span")
    out = rows.tables["otel_spans"]
    record = len(out) - rows.line_start["otel_spans"]
    for scope in resource.get("scopeSpans") or []:
        for span in scope.get("spans") or []:
            if not isinstance(span, dict):
                rows.problem(line, f"line {line}: a span that is not an object", "error")
                continue
            attrs = _attributes(span.get("attributes"))
            start = _ts(span.get("startTimeUnixNano"), rows, line, "startTimeUnixNano")
            end = _ts(span.get("endTimeUnixNano"), rows, line, "endTimeUnixNano")
            status = span.get("status") or {}
            row = {**base, "file_key": rows.file_key, "line": line, "record": record,
                   "trace_id": _hex(span.get("traceId"), ids_base64),
                   "span_id": _hex(span.get("spanId"), ids_base64),
                   "parent_span_id": _hex(span.get("parentSpanId"), ids_base64),
                   "name": span.get("name"), "kind": span.get("kind"),
                   "start_ts": start, "end_ts": end,
                   "duration_ms": (end - start) / 1000 if start and end else None,
                   "status_code": status.get("code"),
                   "convention": _convention(span.get("name"), attrs),
                   "source_file": rows.source_file}
            _fill(rows, line, record, "span", row, attrs, vocab.SPAN_ALL)
            out.append(row)
            record += 1


# --- protobuf ---------------------------------------------------------------------------------
def _proto_to_dict(data: bytes) -> dict:
    """A protobuf export request (logs, metrics or traces: told apart by content) as a dict."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    # the three requests share field numbers up to the records: a type whose parse fails or
    # whose records lack what only that type has is not this message's
    def spans_fit(message) -> bool:
        spans = [s for r in message.resource_spans for sc in r.scope_spans for s in sc.spans]
        return bool(spans) and all(len(s.trace_id) == 16 and len(s.span_id) == 8 for s in spans)

    def metrics_fit(message) -> bool:
        found = [m for r in message.resource_metrics for sc in r.scope_metrics for m in sc.metrics]
        return bool(found) and all(m.name and m.WhichOneof("data") for m in found)

    failure: Exception | None = None
    for kind, fits in ((ExportTraceServiceRequest, spans_fit),
                       (ExportMetricsServiceRequest, metrics_fit),
                       (ExportLogsServiceRequest, None)):
        try:
            message = kind.FromString(data)
        except Exception as exc:  # noqa: BLE001 - google.protobuf's DecodeError and kin
            failure = exc
            continue
        if fits is None or fits(message):
            return json_format.MessageToDict(message, use_integers_for_enums=True)
    raise ValueError(str(failure))
