-- SPEC §2.4 close steps in brain sessions: launches (Task/Agent) of the close agents, or
-- main-chain Reads of their agents/<name>.md, from the close's start (brain_session_phases);
-- when the session has no productive action and no trigger, a boot read of a file its
-- context lists (scribe is in brain's L1) is boot, not close.
-- A macro over `calls`, a relation shaped like brain_session_calls (default that view), so
-- rule_rows_boot_close evaluates brain_session_calls once (a MATERIALIZED CTE it passes
-- here) instead of once per view that reads it; the view close_sequence_calls is this macro
-- over brain_session_calls.
CREATE OR REPLACE MACRO close_sequence_calls_of(calls := 'brain_session_calls') AS TABLE
SELECT c.session_id, c.subject, c.type, c.seq, c.ts, c.agent, c.tool, c.source_file, c.line
FROM query_table(calls) c JOIN brain_session_phases_of(calls := calls) p USING (session_id)
WHERE c.agent IN ('metabolism-scribe', 'todo-scribe', 'scribe', 'coach')
  AND (p.close_from IS NULL OR c.ts > p.close_from)
  AND NOT (p.close_from IS NULL AND c.tool = 'Read' AND EXISTS (
      SELECT 1 FROM context_files f WHERE f.session_type = c.type
        AND ends_with(c.file_path, '/' || f.path)));
