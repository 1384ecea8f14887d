-- Claude Code usage summed in one place (issue 40 item 2): every usage view, `brainlab
-- usage`, the weekly report's usage section, the stored roll-up (cc_usage_groups is this
-- macro at the 15-minute grain over usage_calls), the lake's roll-ups and the status line's
-- digest sum tokens, cost and calls here.
--   calls      a relation shaped like usage_calls: usage_calls itself (every call; what
--              the views read), or cc_usage_rollup (the calls summed per bucket and every
--              dimension, stored by the ingest; `brainlab usage` reads it when current).
--              Not cc_usage_groups: DuckDB does not expand a macro inside itself.
--   grain      bucket (UTC 15 minutes, period = its UTC day), day, week, month (periods of
--              the zone tz; a week starts on first_day, brainlab/spec/weeks.py) or total
--   dims       the dimensions to group by besides the period, one line each below: adding a
--              grouping is one line here (and its column in usage_calls and cc_usage_rollup)
--   cost_mode  calculate (brainlab's prices), reported (each line's costUSD, 0 without one)
--              or auto (costUSD when the line has it, else calculated): which cost cost_usd is
--   since, until  first and last day of the zone tz (inclusive) of the calls summed
-- A dimension not asked for is NULL. Costs are summed as DECIMAL(38,18), exactly, so a sum
-- does not depend on the order DuckDB's threads add the rows in.
CREATE OR REPLACE MACRO usage_by(calls := 'usage_calls', grain := 'day', tz := 'UTC',
                                 first_day := 'monday', cost_mode := 'calculate', dims := [],
                                 since := NULL, until := NULL) AS TABLE
WITH c AS (
    SELECT *, CAST(timezone(tz, bucket AT TIME ZONE 'UTC') AS DATE) AS local_day,
           CASE cost_mode WHEN 'reported' THEN reported_cost_usd WHEN 'auto' THEN auto_cost_usd
                ELSE cost_usd END AS cost
    FROM query_table(calls)
)
SELECT CASE WHEN grain = 'bucket' THEN bucket END AS bucket,
       CASE grain WHEN 'bucket' THEN CAST(bucket AS DATE) WHEN 'day' THEN local_day
                  WHEN 'week' THEN week_first_day(local_day, first_day := first_day)
                  WHEN 'month' THEN CAST(date_trunc('month', local_day) AS DATE) END AS period,
       CASE WHEN list_contains(dims, 'session') THEN session_id END AS session_id,
       CASE WHEN list_contains(dims, 'subagent') THEN is_subagent END AS is_subagent,
       CASE WHEN list_contains(dims, 'nested') THEN is_nested END AS is_nested,
       CASE WHEN list_contains(dims, 'speed') THEN speed END AS speed,
       CASE WHEN list_contains(dims, 'project') THEN project END AS project,
       CASE WHEN list_contains(dims, 'model') THEN model END AS model,
       CASE WHEN list_contains(dims, 'branch') THEN git_branch END AS git_branch,
       CASE WHEN list_contains(dims, 'agent') THEN agent END AS agent,
       CASE WHEN list_contains(dims, 'ticket') THEN ticket END AS ticket,
       CASE WHEN list_contains(dims, 'user') THEN user_name END AS user_name,
       CASE WHEN list_contains(dims, 'machine') THEN machine END AS machine,
       CASE WHEN list_contains(dims, 'organization') THEN organization END AS organization,
       CASE WHEN list_contains(dims, 'query_source') THEN query_source END AS query_source,
       CASE WHEN list_contains(dims, 'agent_name') THEN agent_name END AS agent_name,
       CASE WHEN list_contains(dims, 'skill') THEN skill END AS skill,
       CASE WHEN list_contains(dims, 'plugin') THEN plugin END AS plugin,
       CASE WHEN list_contains(dims, 'mcp_server') THEN mcp_server END AS mcp_server,
       CASE WHEN list_contains(dims, 'effort') THEN effort END AS effort,
       CASE WHEN list_contains(dims, 'source') THEN source END AS source,
       any_value(priced_as) AS priced_as,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
       CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(total_tokens) AS BIGINT) AS total_tokens,
       CAST(sum(CAST(cost AS DECIMAL(38, 18))) AS DOUBLE) AS cost_usd,
       CAST(sum(requests) AS BIGINT) AS requests,
       CAST(sum(unpriced_requests) AS BIGINT) AS unpriced_requests,
       min(first_ts) AS first_ts, max(last_ts) AS last_ts,
       CAST(sum(CAST(reported_cost_usd AS DECIMAL(38, 18))) AS DOUBLE) AS reported_cost_usd,
       CAST(sum(CAST(auto_cost_usd AS DECIMAL(38, 18))) AS DOUBLE) AS auto_cost_usd,
       len(list_distinct(list(session_id))) AS sessions,  -- count(DISTINCT): 2x the query
       CAST(coalesce(sum(requests) FILTER (WHERE is_subagent), 0) AS BIGINT)
           AS subagent_requests,
       CAST(sum(CAST(cost AS DECIMAL(38, 18))) FILTER (WHERE is_subagent) AS DOUBLE)
           AS subagent_cost_usd
FROM c
WHERE (since IS NULL OR local_day >= since) AND (until IS NULL OR local_day <= until)
GROUP BY ALL;
