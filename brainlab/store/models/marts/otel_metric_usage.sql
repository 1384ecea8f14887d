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
