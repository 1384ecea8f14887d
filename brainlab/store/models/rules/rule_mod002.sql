-- ADR-019:81 (modes/<nom>.md): a declared mode that no mode file, boot flag or metabolism
-- working mode defines (session_modes).
CREATE OR REPLACE VIEW rule_mod002 AS
SELECT 'session' AS subject_kind, b.session_id AS subject, min(p.ts) AS occurred_at,
       arg_min(p.source_file, p.nth) AS file, arg_min(p.line, p.nth) AS line,
       'unknown mode +' || p.keyword_mode || ' (known: '
           || (SELECT string_agg(mode, ', ' ORDER BY mode) FROM session_modes) || ')'
           AS message,
       json_object('mode', p.keyword_mode, 'prompt', min(p.nth))::VARCHAR AS evidence
FROM brain_transcripts b
JOIN cc_prompt_keywords p ON p.session_id = b.session_id
WHERE p.keyword_mode IS NOT NULL
  AND p.keyword_mode NOT IN (SELECT mode FROM session_modes)
GROUP BY b.session_id, p.keyword_mode;
