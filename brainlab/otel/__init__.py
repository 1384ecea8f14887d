"""OpenTelemetry files (issue 26): the collector's OTLP JSON/proto output into the call tables.

``brainlab ingest otel PATH...`` reads the files the OpenTelemetry collector's file exporter
writes (JSON lines, or length-prefixed proto or JSON messages, zstd or not, rotated files
renamed with a timestamp): Claude Code's events, metric data points and spans, and other
agents' GenAI / OpenInference spans. :mod:`framing` splits a file into messages,
:mod:`decode` turns one OTLP export request into rows, :mod:`vocab` names the attributes that
get typed columns, :mod:`ingest` runs an incremental ingest keyed by file content.
"""
