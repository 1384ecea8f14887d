-- ADR-019:81: the declared mode's file is read at boot, i.e. by the main chain before its
-- first productive action (protocol_calls: a write that is not bookkeeping, a non-BSI commit).
CREATE OR REPLACE VIEW rule_mod003 AS
SELECT 'session' AS subject_kind, b.session_id AS subject, b.first_prompt_at AS occurred_at,
       b.source_file AS file, b.first_prompt_line AS line,
       '+' || b.declared_mode || ' declared but ' || m.mode_file || ' was not read '
           || CASE WHEN b.first_productive_at IS NULL THEN 'at boot'
                   ELSE 'before the first productive action' END AS message,
       json_object('mode', b.declared_mode, 'mode_file', m.mode_file,
                   'first_productive_at', b.first_productive_at,
                   'read_at', r.read_at)::VARCHAR AS evidence
FROM brain_transcripts b
JOIN session_modes m ON m.mode = b.declared_mode AND m.mode_file IS NOT NULL
LEFT JOIN (SELECT t.session_id, s.mode, min(t.ts) AS read_at
           FROM cc_tool_calls t JOIN session_modes s ON s.mode_file IS NOT NULL
            AND (replace(t.file_path, '\', '/') = s.mode_file
                 OR ends_with(replace(t.file_path, '\', '/'), '/' || s.mode_file))
           WHERE t.agent_id IS NULL AND t.tool = 'Read'
           GROUP BY t.session_id, s.mode) r
  ON r.session_id = b.session_id AND r.mode = b.declared_mode
WHERE r.read_at IS NULL OR r.read_at > b.first_productive_at;
