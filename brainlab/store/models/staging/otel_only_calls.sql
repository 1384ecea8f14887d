-- Calls seen only in telemetry, as rows of cc_request_dedup plus their source: api_request
-- events whose request id no transcript line has (request id first: a transcript line with
-- the same requestId is the same call and keeps its cache split and message id), and the
-- GenAI / OpenInference span calls (source otel-genai / otel-openinference), and where a
-- session has no call at all (no event, no transcript line), its claude_code.token.usage
-- metrics: one row per UTC day and model (source otel-metrics; a group, not one call).
CREATE OR REPLACE VIEW otel_only_calls AS
SELECT e.session_id, CAST(NULL AS VARCHAR) AS agent_id, e.request_id,
       CAST(NULL AS VARCHAR) AS message_id, e.model, e.ts,
       coalesce(e.input_tokens, 0) AS input_tokens, coalesce(e.output_tokens, 0) AS output_tokens,
       coalesce(e.cache_creation_tokens, 0) AS cache_creation_tokens,
       CAST(NULL AS BIGINT) AS cache_creation_5m_tokens,
       CAST(NULL AS BIGINT) AS cache_creation_1h_tokens,
       coalesce(e.cache_read_tokens, 0) AS cache_read_tokens, e.speed,
       false AS is_nested, CAST(NULL AS VARCHAR) AS cwd, e.source_file, e.line,
       'otel' AS source, e.skill_name AS skill
FROM otel_api_requests e
WHERE e.request_id IS NULL
   OR NOT EXISTS (SELECT 1 FROM cc_request_lines l WHERE l.request_id = e.request_id)
UNION ALL
SELECT s.session_id, CAST(NULL AS VARCHAR), s.request_id, CAST(NULL AS VARCHAR), s.model,
       s.start_ts, s.uncached_input_tokens, coalesce(s.output_tokens, 0),
       coalesce(s.cache_creation_tokens, 0), CAST(NULL AS BIGINT), CAST(NULL AS BIGINT),
       coalesce(s.cache_read_tokens, 0), CAST(NULL AS VARCHAR), false, CAST(NULL AS VARCHAR),
       s.source_file, s.line,
       CASE s.convention WHEN 'gen_ai' THEN 'otel-genai' ELSE 'otel-openinference' END,
       CAST(NULL AS VARCHAR)
FROM otel_span_calls s
UNION ALL
SELECT m.session_id, CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR),
       m.model, max(m.interval_end),
       CAST(coalesce(sum(m.value) FILTER (WHERE m.type = 'input'), 0) AS BIGINT),
       CAST(coalesce(sum(m.value) FILTER (WHERE m.type = 'output'), 0) AS BIGINT),
       CAST(coalesce(sum(m.value) FILTER (WHERE m.type = 'cacheCreation'), 0) AS BIGINT),
       CAST(NULL AS BIGINT), CAST(NULL AS BIGINT),
       CAST(coalesce(sum(m.value) FILTER (WHERE m.type = 'cacheRead'), 0) AS BIGINT),
       CAST(NULL AS VARCHAR), false, CAST(NULL AS VARCHAR), any_value(p.source_file),
       min(m.line), 'otel-metrics', CAST(NULL AS VARCHAR)
FROM otel_metric_intervals m
JOIN otel_files p USING (file_key)
WHERE m.metric = 'claude_code.token.usage' AND m.session_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM cc_request_lines l WHERE l.session_id = m.session_id)
  AND NOT EXISTS (SELECT 1 FROM otel_api_requests e WHERE e.session_id = m.session_id)
GROUP BY m.session_id, m.model, CAST(m.interval_end AS DATE);
