-- Per brain session with a main-chain tool call: where boot ends (the first productive
-- action) and where the close starts: after the last close-trigger prompt ('fin',
-- 'on wrappe'..., seeds/session-orchestrator.md.txt:291), else after the last productive
-- action, else the whole session (boot reads of files its context lists excepted, see
-- close_sequence_calls).
-- A macro over `calls`, a relation shaped like brain_session_calls (default that view), so
-- rule_rows_boot_close evaluates brain_session_calls once (a MATERIALIZED CTE it passes
-- here) instead of once per view that reads it; the view brain_session_phases is this macro
-- over brain_session_calls.
CREATE OR REPLACE MACRO brain_session_phases_of(calls := 'brain_session_calls') AS TABLE
WITH triggers AS (
    SELECT session_id, max(ts) AS close_trigger_at FROM cc_marks
    WHERE kind = 'prompt' AND item_key = 'close-trigger' AND agent_id IS NULL
    GROUP BY session_id
), phases AS (
    SELECT session_id, any_value(subject) AS subject, any_value(type) AS type,
           arg_min(source_file, seq) AS source_file,
           min(ts) FILTER (WHERE is_productive) AS first_productive_at,
           max(ts) FILTER (WHERE is_productive) AS last_productive_at,
           arg_min(source_file, seq) FILTER (WHERE is_productive) AS first_productive_file,
           arg_min(line, seq) FILTER (WHERE is_productive) AS first_productive_line,
           arg_min(tool, seq) FILTER (WHERE is_productive) AS first_productive_tool
    FROM query_table(calls) GROUP BY session_id
)
SELECT p.session_id, p.subject, p.type, p.source_file, p.first_productive_at,
       p.first_productive_file, p.first_productive_line, p.first_productive_tool,
       p.last_productive_at, g.close_trigger_at,
       coalesce(g.close_trigger_at, p.last_productive_at) AS close_from
FROM phases p LEFT JOIN triggers g USING (session_id);
