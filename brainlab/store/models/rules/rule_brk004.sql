-- SPEC §4.2 / §4.4: a source loaded for an agent that never referenced it ("au cas où").
-- Judged only for sprints whose references were recorded.
CREATE OR REPLACE VIEW rule_brk004 AS
SELECT 'agent-sprint' AS subject_kind, b.sprint_id || '/' || b.agent AS subject, b.ts AS occurred_at,
       b.source_file AS file, b.line,
       b.agent || ' loaded ' || b.path || ' and never referenced it' AS message,
       json_object('path', b.path, 'references', (
           SELECT list(DISTINCT r.path ORDER BY r.path) FROM sprint_refs r
           WHERE r.sprint_id = b.sprint_id AND r.agent = b.agent))::VARCHAR AS evidence
FROM broker_loads_checked b
WHERE EXISTS (SELECT 1 FROM sprint_refs r WHERE r.sprint_id = b.sprint_id)
  AND NOT EXISTS (SELECT 1 FROM sprint_refs r
                  WHERE r.sprint_id = b.sprint_id AND r.agent = b.agent
                    AND (r.path = b.path OR ends_with(r.path, '/' || b.path)));
