-- The grain `brainlab usage` sums (stored as cc_usage_rollup by each `ingest claude`): one
-- row per UTC 15-minute bucket and every dimension of usage_by (session, main chain or
-- subagent and its type, nested in a progress line or not, speed, project, model, git
-- branch, ticket, and who made the call) of the deduplicated calls (SPEC §7): usage_by's
-- sums of usage_calls. A bucket lies in one day of every time zone (offsets are multiples
-- of 15 minutes), so any zone's days and the 5-hour blocks are sums of these rows.
CREATE OR REPLACE VIEW cc_usage_groups AS
SELECT bucket, period AS day, session_id, is_subagent, is_nested, speed, project, model,
       priced_as, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens,
       total_tokens, cost_usd, requests, unpriced_requests, first_ts, last_ts,
       reported_cost_usd, auto_cost_usd, git_branch, agent, ticket, user_name, machine,
       organization, query_source, agent_name, skill, plugin, mcp_server, effort, source
FROM usage_by(calls := usage_calls, grain := 'bucket',
              dims := ['session', 'subagent', 'nested', 'speed', 'project', 'model', 'branch',
                       'agent', 'ticket', 'user', 'machine', 'organization', 'query_source',
                       'agent_name', 'skill', 'plugin', 'mcp_server', 'effort',
                       'source']);
