-- Main-chain Reads at boot: before the first productive action (the whole session when it
-- has none).
-- A macro over `calls`, a relation shaped like brain_session_calls (default that view), so
-- rule_rows_boot_close evaluates brain_session_calls once (a MATERIALIZED CTE it passes
-- here) instead of once per view that reads it; the view brain_boot_reads is this macro
-- over brain_session_calls.
CREATE OR REPLACE MACRO brain_boot_reads_of(calls := 'brain_session_calls') AS TABLE
SELECT c.session_id, c.subject, c.type, c.ts, c.file_path, c.source_file, c.line
FROM query_table(calls) c JOIN brain_session_phases_of(calls := calls) p USING (session_id)
WHERE c.tool = 'Read' AND c.file_path IS NOT NULL
  AND (p.first_productive_at IS NULL OR c.ts < p.first_productive_at);
