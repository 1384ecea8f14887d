-- Brain sessions among the transcripts, with the type each is judged by: the type its first
-- prompt declares (SPEC §2.7; or the contexts/session-<type>.yml it read, cc_measured), else
-- its matched claim's type, else its matched log's. A transcript is matched to a metabolism
-- log (session_matches), else to a claim whose sess_id it names in a file path (it wrote
-- claims/<sess_id>.yml). subject = that sess_id, else the transcript's sessionId.
CREATE OR REPLACE VIEW brain_transcript_sessions AS
WITH claim_type AS (
    SELECT sess_id, arg_max(type, coalesce(closed_at, opened_at)) AS type
    FROM claims WHERE type IS NOT NULL GROUP BY sess_id
), log_type AS (
    SELECT sess_id, any_value(type) AS type FROM raw_metabolism_logs
    WHERE type IS NOT NULL GROUP BY sess_id
), claimed AS (  -- the claim a transcript names, when no log is matched to it
    SELECT x.transcript_session, min(c.sess_id) AS sess_id
    FROM cc_session_measures x, unnest(x.named_sess_ids) AS n(sess_id)
    JOIN (SELECT DISTINCT sess_id FROM claims) c ON c.sess_id = n.sess_id
    GROUP BY x.transcript_session
), matched AS (
    SELECT m.*, coalesce(m.sess_id, k.sess_id) AS brain_sess_id FROM measured_sessions m
    LEFT JOIN claimed k USING (transcript_session)
)
SELECT m.transcript_session AS session_id, m.brain_sess_id AS sess_id,
       coalesce(m.brain_sess_id, m.transcript_session) AS subject,
       lower(trim(coalesce(nullif(m.type, 'unknown'), c.type, l.type))) AS type,
       CASE WHEN m.type <> 'unknown' THEN 'transcript'
            WHEN c.type IS NOT NULL THEN 'claim' ELSE 'metabolism log' END AS type_source,
       m.started_at, coalesce(x.context_window_tokens, 200000) AS context_window_tokens,
       coalesce(x.todos_created, 0) AS todos_created, m.source_file
FROM matched m
LEFT JOIN cc_session_measures x ON x.transcript_session = m.transcript_session
LEFT JOIN claim_type c ON c.sess_id = m.brain_sess_id
LEFT JOIN log_type l ON l.sess_id = m.brain_sess_id
WHERE m.type <> 'unknown' OR m.brain_sess_id IS NOT NULL;
