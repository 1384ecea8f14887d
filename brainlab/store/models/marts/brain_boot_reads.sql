-- Main-chain Reads at boot: before the first productive action (the whole session when it
-- has none).
CREATE OR REPLACE VIEW brain_boot_reads AS
SELECT c.session_id, c.subject, c.type, c.ts, c.file_path, c.source_file, c.line
FROM brain_session_calls c JOIN brain_session_phases p USING (session_id)
WHERE c.tool = 'Read' AND c.file_path IS NOT NULL
  AND (p.first_productive_at IS NULL OR c.ts < p.first_productive_at);
