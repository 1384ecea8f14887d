-- SPEC §4.2: at most 2 sources per agent.
CREATE OR REPLACE VIEW rule_brk001 AS
SELECT 'agent-sprint' AS subject_kind, sprint_id || '/' || agent AS subject, min(ts) AS occurred_at,
       min(source_file) AS file, min(line) AS line,
       agent || ' gets ' || count(DISTINCT path) || ' sources (max 2): '
           || string_agg(DISTINCT path, ', ' ORDER BY path) AS message,
       json_object('sources', list(DISTINCT path ORDER BY path), 'count', count(DISTINCT path))::VARCHAR
           AS evidence
FROM broker_loads_checked
GROUP BY block_id, sprint_id, agent HAVING count(DISTINCT path) > 2;
