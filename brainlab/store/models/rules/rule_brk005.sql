-- seeds/context-broker.md.txt:32-37 (SPEC §4.2): the broker is never invoked in coach,
-- toolkit-only or audit mode. A recorded inhale block in such a session: the block's own
-- Mode line, the session's type (claim, else log) or the transcript's first-prompt keywords.
CREATE OR REPLACE VIEW rule_brk005 AS
WITH forbidden AS (
    SELECT type AS mode FROM session_type_sets WHERE set_name = 'broker-forbidden'
), session_words AS (
    SELECT sess_id AS session_id, lower(type) AS word, 'session type' AS origin FROM claims
    WHERE type IS NOT NULL
    UNION ALL SELECT sess_id, lower(type), 'session type' FROM raw_metabolism_logs
    WHERE type IS NOT NULL
    UNION ALL SELECT session_id, lower(keyword_type), 'first prompt' FROM cc_marks
    WHERE kind = 'prompt' AND keyword_type IS NOT NULL
    UNION ALL SELECT session_id, lower(keyword_mode), 'first prompt' FROM cc_marks
    WHERE kind = 'prompt' AND keyword_mode IS NOT NULL
), inhale AS (
    SELECT b.*, coalesce(b.session_id, s.session_id) AS sess
    FROM broker_blocks b
    LEFT JOIN (SELECT DISTINCT sprint_id, session_id FROM sprints) s ON s.sprint_id = b.sprint
    WHERE b.kind = 'inhale'
), found AS (
    SELECT i.block_id, i.sprint, i.ts, i.source_file, i.line, i.sess,
           lower(trim(i.mode)) AS mode, 'Mode line' AS origin
    FROM inhale i WHERE lower(trim(i.mode)) IN (SELECT mode FROM forbidden)
    UNION ALL
    SELECT i.block_id, i.sprint, i.ts, i.source_file, i.line, i.sess, w.word, w.origin
    FROM inhale i JOIN session_words w ON w.session_id = i.sess
    WHERE w.word IN (SELECT mode FROM forbidden)
)
SELECT 'sprint' AS subject_kind, sprint AS subject, min(ts) AS occurred_at,
       min(source_file) AS file, min(line) AS line,
       'the context broker ran for sprint ' || sprint || ' in a ' || min(mode)
           || ' session, where the seed never invokes it (' || min(origin) || ')' AS message,
       json_object('mode', min(mode), 'from', min(origin), 'session', min(sess))::VARCHAR
           AS evidence
FROM found
GROUP BY block_id, sprint;
