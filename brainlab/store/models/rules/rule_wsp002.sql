CREATE OR REPLACE VIEW rule_wsp002 AS
SELECT 'workspace' AS subject_kind, workspace AS subject, CAST(expired_on AS TIMESTAMP) AS occurred_at,
       source_file AS file, NULL::BIGINT AS line,
       'archive: keep, TTL expired on ' || expired_on || ': waiting for a human decision'
           AS message,
       json_object('last_decision_on', last_decision_on, 'ttl_days', ttl_days,
                   'expired_on', expired_on, 'as_of', as_of)::VARCHAR AS evidence
FROM workspace_lifecycle WHERE archive = 'keep' AND as_of >= expired_on + 1;
