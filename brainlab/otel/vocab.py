"""Claude Code's telemetry vocabulary (docs page "monitoring-usage") and the GenAI/OpenInference keys.

Which attribute lands in which typed column of ``otel_events`` / ``otel_metric_points`` /
``otel_spans`` (every other attribute goes to ``otel_attributes``), the column types, and
which attributes carry content that must be redacted. Data only: no parsing here.
"""

from __future__ import annotations

from brainlab.spec import ranges

SOURCE = "otel"  # the ``source`` of ingest_errors rows and of telemetry-only calls

# Events Claude Code documents (log records; body / event.name ``claude_code.<name>``).
KNOWN_EVENTS = frozenset({
    "user_prompt", "tool_result", "api_request", "api_error", "tool_decision", "compaction",
    "subagent_completed", "retention_sweep", "api_request_body", "api_response_body",
    "session_start", "session_end", "permission_request", "hook_execution",
})
# Metrics Claude Code documents (``claude_code.`` prefix).
KNOWN_METRICS = frozenset({
    "claude_code.session.count", "claude_code.lines_of_code.count",
    "claude_code.pull_request.count", "claude_code.commit.count", "claude_code.cost.usage",
    "claude_code.token.usage", "claude_code.code_edit_tool.decision",
    "claude_code.active_time.total",
})

# Attributes shared by every signal: resource or record attributes (standard attributes).
COMMON = {
    "service.name": ("service_name", "VARCHAR"),
    "session.id": ("session_id", "VARCHAR"),
    "user.id": ("user_id", "VARCHAR"),
    "user.email": ("user_email", "VARCHAR"),
    "user.account_uuid": ("user_account_uuid", "VARCHAR"),
    "organization.id": ("organization_id", "VARCHAR"),
    "app.version": ("app_version", "VARCHAR"),
    "service.version": ("app_version", "VARCHAR"),
    "terminal.type": ("terminal_type", "VARCHAR"),
    "prompt.id": ("prompt_id", "VARCHAR"),
}

# Event attributes with a typed column in otel_events (beside COMMON).
EVENT = {
    "event.sequence": ("event_sequence", "BIGINT"),
    "model": ("model", "VARCHAR"),
    "request_id": ("request_id", "VARCHAR"),
    "cost_usd": ("cost_usd", "DOUBLE"),
    "duration_ms": ("duration_ms", "DOUBLE"),
    "ttft_ms": ("ttft_ms", "DOUBLE"),
    "input_tokens": ("input_tokens", "BIGINT"),
    "output_tokens": ("output_tokens", "BIGINT"),
    "cache_read_tokens": ("cache_read_tokens", "BIGINT"),
    "cache_creation_tokens": ("cache_creation_tokens", "BIGINT"),
    "speed": ("speed", "VARCHAR"),
    "effort": ("effort", "VARCHAR"),
    "query_source": ("query_source", "VARCHAR"),
    "agent.name": ("agent_name", "VARCHAR"),
    "skill.name": ("skill_name", "VARCHAR"),
    "mcp_server.name": ("mcp_server_name", "VARCHAR"),
    "tool_name": ("tool_name", "VARCHAR"),
    "success": ("success", "BOOLEAN"),
    "decision": ("decision", "VARCHAR"),
    "source": ("decision_source", "VARCHAR"),
    "error": ("error", "VARCHAR"),
    "status_code": ("status_code", "VARCHAR"),
    "attempt": ("attempt", "BIGINT"),
    "prompt_length": ("prompt_length", "BIGINT"),
    "prompt": ("prompt", "VARCHAR"),
    "trigger": ("trigger", "VARCHAR"),
    "pre_tokens": ("pre_tokens", "BIGINT"),
    "tokens_before": ("pre_tokens", "BIGINT"),
    "post_tokens": ("post_tokens", "BIGINT"),
    "tokens_after": ("post_tokens", "BIGINT"),
}

# Metric data point attributes with a typed column in otel_metric_points (beside COMMON).
POINT = {
    "model": ("model", "VARCHAR"),
    "type": ("type", "VARCHAR"),
    "tool_name": ("tool_name", "VARCHAR"),
    "tool": ("tool_name", "VARCHAR"),
    "decision": ("decision", "VARCHAR"),
    "language": ("language", "VARCHAR"),
    "query_source": ("query_source", "VARCHAR"),
    "speed": ("speed", "VARCHAR"),
    "effort": ("effort", "VARCHAR"),
}

# Span attributes with a typed column in otel_spans (beside COMMON). Several conventions
# name the same fact: Claude Code's own spans, OTel GenAI (gen_ai.*), OpenInference (llm.*).
SPAN = {
    "model": ("model", "VARCHAR"),
    "gen_ai.request.model": ("model", "VARCHAR"),
    "gen_ai.response.model": ("model", "VARCHAR"),
    "llm.model_name": ("model", "VARCHAR"),
    "gen_ai.system": ("provider", "VARCHAR"),
    "gen_ai.provider.name": ("provider", "VARCHAR"),
    "llm.provider": ("provider", "VARCHAR"),
    "llm.system": ("provider", "VARCHAR"),
    "request_id": ("request_id", "VARCHAR"),
    "gen_ai.response.id": ("request_id", "VARCHAR"),
    "input_tokens": ("input_tokens", "BIGINT"),
    "gen_ai.usage.input_tokens": ("input_tokens", "BIGINT"),
    "llm.token_count.prompt": ("input_tokens", "BIGINT"),
    "output_tokens": ("output_tokens", "BIGINT"),
    "gen_ai.usage.output_tokens": ("output_tokens", "BIGINT"),
    "llm.token_count.completion": ("output_tokens", "BIGINT"),
    "cache_read_tokens": ("cache_read_tokens", "BIGINT"),
    "gen_ai.usage.cache_read.input_tokens": ("cache_read_tokens", "BIGINT"),
    "gen_ai.usage.cache_read_input_tokens": ("cache_read_tokens", "BIGINT"),
    "llm.token_count.prompt_details.cache_read": ("cache_read_tokens", "BIGINT"),
    "cache_creation_tokens": ("cache_creation_tokens", "BIGINT"),
    "gen_ai.usage.cache_creation.input_tokens": ("cache_creation_tokens", "BIGINT"),
    "gen_ai.usage.cache_creation_input_tokens": ("cache_creation_tokens", "BIGINT"),
    "llm.token_count.prompt_details.cache_write": ("cache_creation_tokens", "BIGINT"),
    "ttft_ms": ("ttft_ms", "DOUBLE"),
    "tool_name": ("tool_name", "VARCHAR"),
    "gen_ai.tool.name": ("tool_name", "VARCHAR"),
    "query_source": ("query_source", "VARCHAR"),
    "agent.name": ("agent_name", "VARCHAR"),
    "gen_ai.agent.name": ("agent_name", "VARCHAR"),
}

# Each signal's full mapping (its own keys win over the standard attributes).
EVENT_ALL = {**COMMON, **EVENT}
POINT_ALL = {**COMMON, **POINT}
SPAN_ALL = {**COMMON, **SPAN}

# Attributes whose value is user content (prompts, tool input and output, API bodies): kept
# only after brainlab's secret redaction, and cut to CONTENT_LIMIT characters.
CONTENT_KEYS = frozenset({
    "prompt", "tool_parameters", "tool_input", "tool_output", "body", "full_command",
    "bash_command", "description", "error", "gen_ai.prompt", "gen_ai.completion",
    "gen_ai.input.messages", "gen_ai.output.messages", "input.value", "output.value",
    "llm.input_messages", "llm.output_messages",
})
CONTENT_LIMIT = 2000
# An attribute value longer than this is cut and flagged with a warning row.
MAX_VALUE_CHARS = 16_384
# Identity attributes --hash-identities stores as keyed hashes.
IDENTITY_COLUMNS = ("user_id", "user_email", "user_account_uuid")

# The range each numeric typed column must fall in (spec/ranges.py): a value outside is an
# error row and not stored (issue 47 item 1); the record keeps its other values.
COLUMN_RANGES = {
    **dict.fromkeys(("input_tokens", "output_tokens", "cache_read_tokens",
                     "cache_creation_tokens", "pre_tokens", "post_tokens"), ranges.TOKENS),
    "cost_usd": ranges.COST_USD,
    **dict.fromkeys(("duration_ms", "ttft_ms"), ranges.DURATION_MS),
    **dict.fromkeys(("event_sequence", "attempt", "prompt_length"), ranges.COUNT),
}
