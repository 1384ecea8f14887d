-- The grain `brainlab usage` sums (stored as cc_usage_rollup by each `ingest claude`): one
-- row per UTC 15-minute bucket, session, main chain or subagent, nested in a progress line or
-- not, speed (fast mode or standard), project, model and git branch of the
-- deduplicated calls (SPEC §7): token, cost and call sums, and the first and last call. A
-- bucket lies in one day of every time zone (offsets are multiples of 15 minutes).
CREATE OR REPLACE VIEW cc_usage_groups AS
SELECT time_bucket(INTERVAL 15 MINUTE, ts) AS bucket, CAST(ts AS DATE) AS day, session_id,
       agent_id IS NOT NULL AS is_subagent, coalesce(is_nested, false) AS is_nested,
       CASE WHEN speed = 'fast' THEN 'fast' ELSE 'standard' END AS speed, project,
       model, priced_as,
       CAST(sum(input_tokens) AS BIGINT) AS input_tokens, CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
       CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens,
       CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
       CAST(sum(input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens)
           AS BIGINT) AS total_tokens,
       -- costs are summed as DECIMAL(38,18), exactly, so the sum does not depend on the
       -- order DuckDB's threads add the calls in: the stored cc_usage_rollup equals this
       -- view row for row (a DOUBLE sum differed in the last bit from run to run)
       CAST(sum(CAST(cost_usd AS DECIMAL(38, 18))) AS DOUBLE) AS cost_usd,
       count(*) AS requests,
       count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced_requests,
       min(ts) AS first_ts, max(ts) AS last_ts,
       -- --cost-mode (ccusage's display / auto): the line's costUSD, 0 when absent; the
       -- line's costUSD when it has one, else the calculated cost
       CAST(sum(CAST(coalesce(reported_cost_usd, 0) AS DECIMAL(38, 18))) AS DOUBLE)
           AS reported_cost_usd,
       CAST(sum(CAST(coalesce(reported_cost_usd, cost_usd) AS DECIMAL(38, 18))) AS DOUBLE)
           AS auto_cost_usd,
       git_branch  -- grouped by (GROUP BY ALL): `usage branches`
FROM cc_requests
GROUP BY ALL;
