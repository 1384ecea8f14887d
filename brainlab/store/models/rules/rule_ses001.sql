-- SPEC §2.2: types kept verbatim with category unknown are reported.
CREATE OR REPLACE VIEW rule_ses001 AS
SELECT 'session' AS subject_kind, l.sess_id AS subject, l.started_at AS occurred_at,
       l.source_file AS file, NULL::BIGINT AS line,
       'session type "' || l.type || '" is not a SPEC §2.2 type' AS message,
       json_object('type', l.type, 'where', 'metabolism log')::VARCHAR AS evidence
FROM raw_metabolism_logs l
WHERE l.type IS NOT NULL AND lower(trim(l.type)) NOT IN (SELECT type FROM session_categories)
UNION ALL
SELECT 'session', c.sess_id, c.opened_at, c.source_file, NULL,
       'claim type "' || c.type || '" is not a SPEC §2.2 type',
       json_object('type', c.type, 'where', 'claim')::VARCHAR
FROM claims c
WHERE c.type IS NOT NULL AND lower(trim(c.type)) NOT IN (SELECT type FROM session_categories);
