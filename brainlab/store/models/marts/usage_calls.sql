-- Every deduplicated call (cc_requests, SPEC §7) in the shape usage_by sums: its 15-minute
-- bucket, every dimension a usage view can group by, and its measures as one-call sums
-- (requests 1, unpriced_requests 1 when the call has no price, first_ts = last_ts = ts), so
-- that usage_by sums calls and their stored groups (cc_usage_rollup) with the same SQL.
-- Who made the call comes from the lake's partitions (lake_files) on an attached lake, else
-- from the call's api_request event (telemetry, issue 26); the ticket from its session's
-- latest working directory (a worktree .claude/worktrees/<ticket>).
CREATE OR REPLACE VIEW usage_calls AS
SELECT time_bucket(INTERVAL 15 MINUTE, c.ts) AS bucket, CAST(c.ts AS DATE) AS day, c.ts,
       c.session_id, c.agent_id IS NOT NULL AS is_subagent,
       coalesce(c.is_nested, false) AS is_nested,
       CASE WHEN c.speed = 'fast' THEN 'fast' ELSE 'standard' END AS speed, c.project, c.model,
       c.priced_as, c.git_branch,
       CASE WHEN c.agent_id IS NULL THEN 'main'
            ELSE coalesce(c.subagent_type, 'subagent (type unknown)') END AS agent,
       nullif(regexp_extract(sp.cwd, '[/\\]\.claude[/\\]worktrees[/\\]([^/\\]+)', 1), '')
           AS ticket,
       coalesce(f."user", e.user_email, e.user_account_uuid, e.user_id) AS user_name,
       f.machine, e.organization_id AS organization, e.query_source, e.agent_name,
       coalesce(c.skill, e.skill_name) AS skill, c.plugin, e.mcp_server_name AS mcp_server,
       e.effort, c.source,
       c.input_tokens, c.output_tokens, c.cache_creation_tokens, c.cache_read_tokens,
       c.input_tokens + c.output_tokens + c.cache_creation_tokens + c.cache_read_tokens
           AS total_tokens,
       c.cost_usd, coalesce(c.reported_cost_usd, 0) AS reported_cost_usd,
       coalesce(c.reported_cost_usd, c.cost_usd) AS auto_cost_usd,
       1 AS requests, CASE WHEN c.cost_usd IS NULL THEN 1 ELSE 0 END AS unpriced_requests,
       c.ts AS first_ts, c.ts AS last_ts
FROM cc_requests c
LEFT JOIN cc_session_projects sp ON sp.session_id = c.session_id
LEFT JOIN otel_api_requests e ON e.request_id = c.request_id
LEFT JOIN lake_files f ON f.source_file = c.source_file;
