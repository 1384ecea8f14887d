CREATE OR REPLACE VIEW rule_wsp001 AS
SELECT 'workspace' AS subject_kind, workspace AS subject, CAST(expired_on AS TIMESTAMP) AS occurred_at,
       source_file AS file, NULL::BIGINT AS line,
       'archive: auto but TTL expired on ' || expired_on || ' and the workspace is still here'
           AS message,
       json_object('last_decision_on', last_decision_on, 'ttl_days', ttl_days,
                   'expired_on', expired_on, 'as_of', as_of)::VARCHAR AS evidence
FROM workspace_lifecycle WHERE archive = 'auto' AND as_of >= expired_on + 1;
