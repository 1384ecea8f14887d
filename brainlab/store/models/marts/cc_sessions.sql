-- SPEC §7 mapping: one transcript session per sessionId. Context size of a request =
-- input + cache_creation + cache_read; peak / close over main-chain requests (agent NULL)
-- against the context window: 200k (SPEC §2.5 default), or 1M when a request of the session
-- went past 200k (only a 1M-context model can); tokens_used = context size at close.
CREATE OR REPLACE VIEW cc_sessions AS
WITH spans AS (SELECT * FROM cc_session_spans), main AS (
    SELECT session_id, max(context_tokens) AS context_peak_tokens,
           arg_max(context_tokens, ts) AS context_close_tokens, count(*) AS main_requests,
           CASE WHEN max(context_tokens) > 200000 THEN 1000000 ELSE 200000 END
               AS context_window_tokens
    FROM cc_requests WHERE agent_id IS NULL GROUP BY session_id
), tools AS (
    SELECT session_id, count(*) FILTER (WHERE is_git_commit) AS commits,
           count(DISTINCT launched_subagent_type) AS subagent_types_launched
    FROM cc_tool_calls GROUP BY session_id
), compact AS (
    SELECT session_id, count(*) AS compactions FROM cc_compactions GROUP BY session_id
)
SELECT s.session_id,
       coalesce(s.main_started_at, s.started_at) AS started_at,
       coalesce(s.main_ended_at, s.ended_at) AS ended_at,
       round(date_diff('second', coalesce(s.main_started_at, s.started_at),
                       coalesce(s.main_ended_at, s.ended_at)) / 60.0, 1) AS duration_min,
       s.cwd, sp.project, m.context_window_tokens,
       round(100.0 * m.context_peak_tokens / m.context_window_tokens, 1) AS context_peak_pct,
       round(100.0 * m.context_close_tokens / m.context_window_tokens, 1) AS context_at_close,
       m.context_close_tokens AS tokens_used,
       u.total_tokens AS billed_tokens, u.cost_usd, u.requests,
       coalesce(m.main_requests, 0) AS main_requests,
       coalesce(u.subagent_requests, 0) AS subagent_requests,
       coalesce(t.commits, 0) AS commits, coalesce(c.compactions, 0) AS compactions,
       s.main_file AS source_file
FROM spans s
LEFT JOIN main m USING (session_id)
LEFT JOIN usage_sessions u USING (session_id)
LEFT JOIN tools t USING (session_id)
LEFT JOIN compact c USING (session_id)
LEFT JOIN cc_session_projects sp USING (session_id);
