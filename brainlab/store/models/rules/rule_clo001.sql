-- SPEC §2.4 step 1: a closed session has its metabolism log.
CREATE OR REPLACE VIEW rule_clo001 AS
SELECT 'session' AS subject_kind, c.sess_id AS subject, coalesce(c.closed_at, c.opened_at) AS occurred_at,
       c.source_file AS file, NULL::BIGINT AS line,
       'claim closed but no metabolism log for ' || c.sess_id AS message,
       json_object('status', c.status, 'closed_at', c.closed_at)::VARCHAR AS evidence
FROM claims c
WHERE c.status = 'closed'
  AND NOT EXISTS (SELECT 1 FROM raw_metabolism_logs l WHERE l.sess_id = c.sess_id)
  -- a brain that keeps no metabolism log at all (the public template) is not judged
  AND EXISTS (SELECT 1 FROM raw_metabolism_logs);
