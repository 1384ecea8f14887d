-- Every main-chain human prompt's keywords (SPEC §2.7), numbered in the session.
CREATE OR REPLACE VIEW cc_prompt_keywords AS
SELECT session_id, ts, keyword_type, keyword_mode, keyword_rule, source_file, line,
       row_number() OVER (PARTITION BY session_id ORDER BY ts NULLS LAST, source_file, line)
           AS nth
FROM cc_marks WHERE kind = 'prompt';
