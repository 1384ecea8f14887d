-- SPEC §2.4 step 5: a session that wrote its log also closed its claim.
CREATE OR REPLACE VIEW rule_clo002 AS
SELECT 'session' AS subject_kind, l.sess_id AS subject, l.started_at AS occurred_at,
       l.source_file AS file, NULL::BIGINT AS line,
       CASE WHEN c.sess_id IS NULL THEN 'metabolism log written but no claim file for '
                                        || l.sess_id
            ELSE 'metabolism log written but the claim is still ' || coalesce(c.status, '?')
       END AS message,
       json_object('claim_status', c.status)::VARCHAR AS evidence
FROM raw_metabolism_logs l
LEFT JOIN (SELECT sess_id, arg_max(status, coalesce(closed_at, opened_at)) AS status
           FROM claims GROUP BY sess_id) c USING (sess_id)
WHERE c.status IS DISTINCT FROM 'closed'
  AND EXISTS (SELECT 1 FROM claims);
