-- One row per brain session that ran a close (at least one close agent), its order and facts.
CREATE OR REPLACE VIEW close_sequences AS
WITH agents AS (
    SELECT session_id, any_value(subject) AS subject, any_value(type) AS type,
           list(agent ORDER BY seq) AS agents, arg_min(agent, seq) AS first_agent,
           max(ts) AS last_agent_at, arg_max(agent, seq) AS last_agent,
           arg_min(source_file, seq) AS file, arg_min(line, seq) AS line, min(ts) AS started_at
    FROM close_sequence_calls GROUP BY session_id
), claim AS (
    SELECT session_id, max(ts) AS claim_closed_at FROM brain_session_calls
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
    FROM brain_session_calls GROUP BY session_id
)
SELECT a.*, c.claim_closed_at, coalesce(s.commits, 0) AS commits,
       coalesce(s.agents_written, 0) AS agents_written,
       coalesce(s.specs_changed, 0) AS specs_changed, coalesce(m.todos_created, 0) AS todos_created
FROM agents a
LEFT JOIN cc_session_measures m ON m.transcript_session = a.session_id
LEFT JOIN claim c USING (session_id)
LEFT JOIN significant s USING (session_id);
