-- SPEC §2.7 / ADR-019:78: a mode keyword in a later prompt instead of the first message
-- (a later prompt repeating the first message's mode declares nothing new).
CREATE OR REPLACE VIEW rule_mod001 AS
SELECT 'session' AS subject_kind, b.session_id AS subject, p.ts AS occurred_at,
       p.source_file AS file, p.line,
       '+' || p.keyword_mode || ' declared in prompt ' || p.nth
           || ', not in the first message' AS message,
       json_object('mode', p.keyword_mode, 'prompt', p.nth,
                   'first_message_mode', b.declared_mode)::VARCHAR AS evidence
FROM brain_transcripts b
JOIN cc_prompt_keywords p ON p.session_id = b.session_id
WHERE p.nth > 1 AND p.keyword_mode IS NOT NULL
  AND p.keyword_mode IS DISTINCT FROM b.declared_mode;
