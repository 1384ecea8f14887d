-- SPEC §5 read rights: feedback.md is never read during an active sprint (transcripts).
CREATE OR REPLACE VIEW rule_wsp009 AS
SELECT 'workspace' AS subject_kind, l.workspace AS subject, t.ts AS occurred_at,
       t.source_file AS file, t.line,
       coalesce(t.subagent_type, 'the main session') || ' read ' || l.workspace
           || '/feedback.md during the sprint (last decision ' || l.last_decision_on || ')'
           AS message,
       json_object('agent', coalesce(t.subagent_type, 'main'), 'ts', t.ts,
                   'last_decision_on', l.last_decision_on)::VARCHAR AS evidence
FROM cc_tool_calls t
JOIN workspace_lifecycle l
  ON regexp_extract(t.file_path, '(^|/)workspace/([^/]+)/feedback\.md$', 2) = l.workspace
WHERE t.tool = 'Read' AND CAST(t.ts AS DATE) <= l.last_decision_on;
