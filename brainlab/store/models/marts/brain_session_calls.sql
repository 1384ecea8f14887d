-- The main-chain tool calls of brain sessions, in order, classified by protocol_calls
-- (protocol_calls: productive, claim close, close agent).
CREATE OR REPLACE VIEW brain_session_calls AS
SELECT b.session_id, b.subject, b.type, t.ts, t.tool, t.file_path, t.launched_subagent_type,
       t.source_file, t.line,
       row_number() OVER (PARTITION BY t.session_id
                          ORDER BY t.ts NULLS LAST, t.source_file, t.line) AS seq,
       t.is_productive, t.is_claim_close, t.agent
FROM protocol_calls t JOIN brain_transcript_sessions b USING (session_id);
