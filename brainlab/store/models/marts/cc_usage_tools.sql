-- Cost by tool (issue 24, `brainlab usage tools`): each deduplicated call (cc_requests)
-- split among the tool uses it issued, so the rows add up to the calls' totals.
-- A tool use belongs to the call of the assistant line holding its tool_use block (the
-- lines of one response share message.id; cc_tool_calls keeps each tool_use id once). The
-- reader stores one line per message.id and file (the one the SPEC §7 deduplication would
-- keep: the last of the response's consecutive lines), so a tool line is linked to the
-- first stored request line at or after it in its file, of the same agent. A
-- call that issued N tool uses gives each tool (uses of it)/N of its tokens and cost: the
-- tokens in whole tokens, by cumulative shares (the parts sum to the call's exactly). A call
-- that issued none is one row with tool NULL and all of its tokens and cost.
CREATE OR REPLACE VIEW cc_usage_tools AS
WITH uses AS (
    SELECT coalesce(l.message_id, l.source_file || ':' || l.line) AS key, t.tool,
           count(*) AS uses
    FROM cc_tool_calls t
    ASOF JOIN cc_request_lines l
      ON l.source_file = t.source_file AND coalesce(l.agent_id, '') = coalesce(t.agent_id, '')
     AND l.line >= t.line
    GROUP BY ALL
), shares AS (
    SELECT key, tool, uses,
           sum(uses) OVER (PARTITION BY key ORDER BY tool) AS upto,
           sum(uses) OVER (PARTITION BY key) AS n
    FROM uses
), calls AS (
    SELECT c.*, s.tool, coalesce(s.uses, 0) AS uses, coalesce(s.uses, 1) AS u,
           coalesce(s.upto, 1) AS upto, coalesce(s.n, 1) AS n
    FROM (SELECT *, coalesce(message_id, request_id, source_file || ':' || line) AS key
          FROM cc_requests) c  -- a telemetry line holds several calls: each its request id
    LEFT JOIN shares s ON s.key = c.key
)
SELECT ts, session_id, project, tool, uses,
       CAST(input_tokens * upto // n - input_tokens * (upto - u) // n AS BIGINT)
           AS input_tokens,
       CAST(output_tokens * upto // n - output_tokens * (upto - u) // n AS BIGINT)
           AS output_tokens,
       CAST(cache_creation_tokens * upto // n - cache_creation_tokens * (upto - u) // n
            AS BIGINT) AS cache_creation_tokens,
       CAST(cache_read_tokens * upto // n - cache_read_tokens * (upto - u) // n AS BIGINT)
           AS cache_read_tokens,
       cost_usd * u / n AS cost_usd,
       coalesce(reported_cost_usd, 0) * u / n AS reported_cost_usd,
       coalesce(reported_cost_usd, cost_usd) * u / n AS auto_cost_usd,
       key AS call_key
FROM calls;
