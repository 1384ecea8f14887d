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
