CREATE OR REPLACE VIEW rule_wsp008 AS
SELECT 'workspace' AS subject_kind, workspace AS subject, NULL::TIMESTAMP AS occurred_at, file,
       CAST(line AS BIGINT) AS line, detail AS message,
       json_object('detail', detail)::VARCHAR AS evidence
FROM workspace_violations_located WHERE rule IN ('unknown-archive', 'missing-readme');
