-- SPEC §2.4 close steps in brain sessions: launches (Task/Agent) of the close agents, or
-- main-chain Reads of their agents/<name>.md, from the close's start (brain_session_phases);
-- when the session has no productive action and no trigger, a boot read of a file its
-- context lists (scribe is in brain's L1) is boot, not close.
CREATE OR REPLACE VIEW close_sequence_calls AS
SELECT c.session_id, c.subject, c.type, c.seq, c.ts, c.agent, c.tool, c.source_file, c.line
FROM brain_session_calls c JOIN brain_session_phases p USING (session_id)
WHERE c.agent IN ('metabolism-scribe', 'todo-scribe', 'scribe', 'coach')
  AND (p.close_from IS NULL OR c.ts > p.close_from)
  AND NOT (p.close_from IS NULL AND c.tool = 'Read' AND EXISTS (
      SELECT 1 FROM context_files f WHERE f.session_type = c.type
        AND ends_with(c.file_path, '/' || f.path)));
