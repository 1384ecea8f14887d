CREATE OR REPLACE VIEW rule_wsp004 AS
SELECT 'workspace' AS subject_kind, workspace AS subject, NULL::TIMESTAMP AS occurred_at, file,
       CAST(line AS BIGINT) AS line, detail AS message,
       json_object('file_name', file_name)::VARCHAR AS evidence
FROM workspace_violations_located WHERE rule = 'file-not-allowed';
