-- The transcript sessions that are brain sessions: a prompt declares a brain type or mode
-- (`brain <type>`, `brain +<mode>`, `brain boot [mode] <type>`), or the session is matched
-- to a metabolism log or names a claim's sess_id in a file path. Any other Claude Code
-- session is not a protocol session: the transcript rules never judge it.
CREATE OR REPLACE VIEW brain_transcripts AS
WITH declared AS (
    SELECT session_id, bool_or(keyword_type IS NOT NULL OR keyword_mode IS NOT NULL)
               AS declares
    FROM cc_prompt_keywords GROUP BY session_id
), matched AS (
    SELECT transcript_session AS session_id, min(sess_id) AS sess_id
    FROM session_matches WHERE match_status = 'matched' GROUP BY transcript_session
), claimed AS (
    SELECT DISTINCT m.transcript_session AS session_id
    FROM (SELECT transcript_session, unnest(named_sess_ids) AS sess_id
          FROM cc_session_measures) m
    JOIN claims c USING (sess_id)
), productive AS (  -- the end of boot, as every protocol rule reads it (protocol_calls)
    SELECT session_id, min(ts) AS first_productive_at
    FROM protocol_calls WHERE is_productive
    GROUP BY session_id
)
SELECT s.session_id, f.keyword_type AS declared_type, f.keyword_mode AS declared_mode,
       f.keyword_rule AS first_prompt_rule, f.ts AS first_prompt_at,
       coalesce(f.source_file, s.main_file) AS source_file, f.line AS first_prompt_line,
       m.sess_id, p.first_productive_at,
       CASE WHEN coalesce(d.declares, false) THEN 'keyword'
            WHEN m.sess_id IS NOT NULL THEN 'metabolism log' ELSE 'claim' END AS brain_evidence
FROM cc_session_spans s
LEFT JOIN cc_prompt_keywords f ON f.session_id = s.session_id AND f.nth = 1
LEFT JOIN declared d ON d.session_id = s.session_id
LEFT JOIN matched m ON m.session_id = s.session_id
LEFT JOIN productive p ON p.session_id = s.session_id
WHERE coalesce(d.declares, false) OR m.sess_id IS NOT NULL
   OR s.session_id IN (SELECT session_id FROM claimed);
