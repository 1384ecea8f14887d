-- SPEC §2.2: a brain session type declared in a transcript that SPEC §2.2 does not know
-- (`brain boot [mode] <word>`, the explicit trigger; `brain <word>` prose is not a type).
CREATE OR REPLACE VIEW rule_ses002 AS
SELECT 'session' AS subject_kind, b.session_id AS subject, p.ts AS occurred_at,
       p.source_file AS file, p.line,
       'transcript declares session type "' || p.keyword_type || '", not a SPEC §2.2 type'
           AS message,
       json_object('type', p.keyword_type, 'prompt', p.nth, 'where', 'transcript')::VARCHAR
           AS evidence
FROM brain_transcripts b
JOIN cc_prompt_keywords p ON p.session_id = b.session_id
WHERE p.keyword_type IS NOT NULL
  AND lower(p.keyword_type) NOT IN (SELECT type FROM session_categories);
