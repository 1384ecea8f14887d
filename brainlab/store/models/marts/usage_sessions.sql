-- Usage by session (sessionId; subagent calls of every layout, progress-nested included,
-- count in their parent session, so sessions add up to days).
CREATE OR REPLACE VIEW usage_sessions AS
SELECT session_id, min(ts) AS first_ts, max(ts) AS last_ts,
       any_value(project ORDER BY ts DESC) FILTER (WHERE project IS NOT NULL) AS project,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens, CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens)
           AS BIGINT) AS total_tokens,
       sum(cost_usd) AS cost_usd, count(*) AS requests,
       count(*) FILTER (WHERE agent_id IS NOT NULL) AS subagent_requests,
       sum(cost_usd) FILTER (WHERE agent_id IS NOT NULL) AS subagent_cost_usd
FROM cc_requests
GROUP BY session_id;
