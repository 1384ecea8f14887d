-- Usage by session (sessionId; subagent calls of every layout, progress-nested included,
-- count in their parent session, so sessions add up to days). A session's project is one
-- (cc_session_projects). From usage_by, the one place usage is summed.
CREATE OR REPLACE VIEW usage_sessions AS
SELECT session_id, first_ts, last_ts, project, input_tokens, output_tokens,
       cache_creation_tokens, cache_read_tokens, total_tokens, cost_usd, requests,
       subagent_requests, subagent_cost_usd
FROM usage_by(calls := usage_calls, grain := 'total', dims := ['session', 'project']);
