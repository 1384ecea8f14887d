-- One row per brain session that ran a close (at least one close agent), its order and facts.
-- A macro over `calls`, a relation shaped like brain_session_calls (default that view), so
-- rule_rows_boot_close evaluates brain_session_calls once (a MATERIALIZED CTE it passes
-- here) instead of once per view that reads it; the view close_sequences is this macro
-- over brain_session_calls.
CREATE OR REPLACE MACRO close_sequences_of(calls := 'brain_session_calls') AS TABLE
WITH agents AS (
    SELECT session_id, any_value(subject) AS subject, any_value(type) AS type,
           list(agent ORDER BY seq) AS agents, arg_min(agent, seq) AS first_agent,
           max(ts) AS last_agent_at, arg_max(agent, seq) AS last_agent,
           arg_min(source_file, seq) AS file, arg_min(line, seq) AS line, min(ts) AS started_at
    FROM close_sequence_calls_of(calls := calls) GROUP BY session_id
), claim AS (
    SELECT session_id, max(ts) AS claim_closed_at FROM query_table(calls)
    WHERE is_claim_close GROUP BY session_id
), significant AS (
    SELECT session_id,
           count(*) FILTER (WHERE tool = 'Bash' AND is_productive) AS commits,
           count(*) FILTER (WHERE tool = 'Write'
               AND regexp_matches(file_path, '(^|[/\\])agents[/\\][^/\\]+\.md$'))
               AS agents_written,
           count(*) FILTER (WHERE is_productive AND tool <> 'Bash'
               AND regexp_matches(file_path, '(^|[/\\-])specs?\.md$', 'i'))
               AS specs_changed
    FROM query_table(calls) GROUP BY session_id
)
SELECT a.*, c.claim_closed_at, coalesce(s.commits, 0) AS commits,
       coalesce(s.agents_written, 0) AS agents_written,
       coalesce(s.specs_changed, 0) AS specs_changed, coalesce(m.todos_created, 0) AS todos_created
FROM agents a
LEFT JOIN cc_session_measures m ON m.transcript_session = a.session_id
LEFT JOIN claim c USING (session_id)
LEFT JOIN significant s USING (session_id);
