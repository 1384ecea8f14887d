-- OpenTelemetry (issue 26): metric intervals, the check of metrics against calls, who spent
-- what, and what telemetry adds that transcripts lack. Reads cc_requests (views/15_claude.sql).

-- claude_code.token.usage and cost.usage per session and model, from the metric intervals.
CREATE OR REPLACE VIEW otel_metric_usage AS
SELECT session_id, model, min(interval_start) AS first_ts, max(interval_end) AS last_ts,
       CAST(sum(value) FILTER (WHERE metric = 'claude_code.token.usage' AND type = 'input')
           AS BIGINT) AS input_tokens,
       CAST(sum(value) FILTER (WHERE metric = 'claude_code.token.usage' AND type = 'output')
           AS BIGINT) AS output_tokens,
       CAST(sum(value) FILTER (WHERE metric = 'claude_code.token.usage'
                               AND type = 'cacheCreation') AS BIGINT) AS cache_creation_tokens,
       CAST(sum(value) FILTER (WHERE metric = 'claude_code.token.usage' AND type = 'cacheRead')
           AS BIGINT) AS cache_read_tokens,
       sum(value) FILTER (WHERE metric = 'claude_code.cost.usage') AS cost_usd
FROM otel_metric_intervals
WHERE metric IN ('claude_code.token.usage', 'claude_code.cost.usage')
GROUP BY ALL;

-- Metric totals beside call totals per session and model: the calls of every source
-- (cc_requests, but the otel-metrics rows) and, where no call exists, the metrics alone
-- (only_in = 'metrics').
CREATE OR REPLACE VIEW otel_usage_check AS
WITH calls AS (
    SELECT session_id, model, count(*) AS calls,
           CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
           CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
           CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
           CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
           sum(e.cost_usd) AS event_cost_usd
    FROM cc_requests c
    LEFT JOIN (SELECT request_id, cost_usd FROM otel_api_requests) e USING (request_id)
    WHERE session_id IN (SELECT session_id FROM otel_metric_usage)
      AND source <> 'otel-metrics'  -- the metrics themselves: not a second count
    GROUP BY ALL
)
SELECT coalesce(m.session_id, c.session_id) AS session_id, coalesce(m.model, c.model) AS model,
       c.calls, m.input_tokens AS metric_input_tokens, c.input_tokens AS call_input_tokens,
       m.output_tokens AS metric_output_tokens, c.output_tokens AS call_output_tokens,
       m.cache_creation_tokens AS metric_cache_creation_tokens,
       c.cache_creation_tokens AS call_cache_creation_tokens,
       m.cache_read_tokens AS metric_cache_read_tokens,
       c.cache_read_tokens AS call_cache_read_tokens,
       m.cost_usd AS metric_cost_usd, c.event_cost_usd,
       CASE WHEN c.session_id IS NULL THEN 'metrics' WHEN m.session_id IS NULL THEN 'calls'
            END AS only_in
FROM otel_metric_usage m
FULL OUTER JOIN calls c ON c.session_id = m.session_id AND c.model = m.model;

-- Each call of cc_requests with who made it and why, from its api_request event (request id).
CREATE OR REPLACE VIEW otel_calls AS
SELECT c.session_id, c.agent_id, c.request_id, c.message_id, c.model, c.ts, c.input_tokens,
       c.output_tokens, c.cache_creation_tokens, c.cache_read_tokens, c.cost_usd, c.project,
       c.source, coalesce(e.user_email, e.user_account_uuid, e.user_id) AS user_name,
       e.user_email, e.user_account_uuid, e.organization_id, e.query_source, e.agent_name,
       e.skill_name, e.mcp_server_name, e.effort, coalesce(l.speed, e.speed) AS speed,
       e.ttft_ms, e.duration_ms, e.cost_usd AS event_cost_usd, e.app_version
FROM cc_requests c
LEFT JOIN (SELECT request_id, any_value(speed) AS speed FROM cc_request_lines
           WHERE request_id IS NOT NULL GROUP BY request_id) l USING (request_id)
LEFT JOIN otel_api_requests e ON e.request_id = c.request_id;

-- Usage by UTC day and who spent it: user, organization, query source, agent, skill, MCP
-- server, effort, speed, and the source of the calls (transcript, otel, otel-genai, ...).
CREATE OR REPLACE VIEW usage_who AS
SELECT CAST(ts AS DATE) AS day, user_name, organization_id, query_source, agent_name,
       skill_name, mcp_server_name, effort, speed, source, model,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
       CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens)
           AS BIGINT) AS total_tokens,
       sum(cost_usd) AS cost_usd, count(*) AS requests
FROM otel_calls
GROUP BY ALL;

-- What telemetry adds, per ISO week: time to first token, permission waits, tool durations,
-- API errors and retries, compactions with their tokens before and after.
CREATE OR REPLACE VIEW otel_weekly_activity AS
WITH ev AS (
    SELECT CAST(date_trunc('week', ts) AS DATE) AS week_start, * FROM otel_events
    QUALIFY row_number() OVER (PARTITION BY coalesce(request_id || event_name,
                                                      file_key || ':' || line || ':' || record)
                               ORDER BY ts, file_key, line, record) = 1
), sp AS (
    SELECT CAST(date_trunc('week', start_ts) AS DATE) AS week_start, * FROM otel_spans
    WHERE convention = 'claude_code'
), weeks AS (SELECT week_start FROM ev UNION SELECT week_start FROM sp)
SELECT w.week_start,
       (SELECT count(*) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'api_request') AS api_requests,
       (SELECT median(coalesce(ev.ttft_ms, NULL)) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'api_request') AS event_ttft_ms_median,
       (SELECT median(sp.ttft_ms) FROM sp WHERE sp.week_start = w.week_start
        AND sp.name = 'claude_code.llm_request') AS span_ttft_ms_median,
       (SELECT sum(sp.duration_ms) / 1000.0 FROM sp WHERE sp.week_start = w.week_start
        AND sp.name LIKE '%blocked_on_user%') AS permission_wait_s,
       (SELECT count(*) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'tool_result') AS tool_results,
       (SELECT sum(ev.duration_ms) / 1000.0 FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'tool_result') AS tool_time_s,
       (SELECT count(*) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'api_error') AS api_errors,
       (SELECT count(*) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'api_error' AND attempt > 1) AS retries,
       (SELECT count(*) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'compaction') AS compactions,
       (SELECT CAST(sum(pre_tokens) AS BIGINT) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'compaction') AS compaction_tokens_before,
       (SELECT CAST(sum(post_tokens) AS BIGINT) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'compaction') AS compaction_tokens_after
FROM weeks w
WHERE w.week_start IS NOT NULL;
