-- SPEC §3.1: the scribe's mandatory fields.
CREATE OR REPLACE VIEW rule_met001 AS
SELECT 'session' AS subject_kind, sess_id AS subject, started_at AS occurred_at, source_file AS file,
       NULL::BIGINT AS line,
       'metabolism log lacks ' || array_to_string(missing_fields, ', ') AS message,
       json_object('missing', missing_fields)::VARCHAR AS evidence
FROM raw_metabolism_logs WHERE len(coalesce(missing_fields, [])) > 0;
