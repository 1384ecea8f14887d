-- SPEC §4.2: no source already in context since boot (the sprint's session type's layers).
CREATE OR REPLACE VIEW rule_brk002 AS
WITH session_type AS (  -- the claim's type (a SPEC §2.2 type), else the log's
    SELECT sess_id, lower(arg_min(type, priority)) AS type FROM (
        SELECT sess_id, type, 0 AS priority FROM claims
        UNION ALL SELECT sess_id, type, 1 FROM raw_metabolism_logs)
    WHERE type IS NOT NULL GROUP BY sess_id
), boot AS (
    SELECT b.sprint_id, b.agent, b.path, b.source_file, b.line, b.ts, t.type, cf.layer,
           replace(cf.path, '{project}', coalesce(b.project, '')) AS boot_path
    FROM broker_loads_checked b
    JOIN (SELECT session_id AS sess_id, sprint_id FROM sprints
          UNION SELECT session_id, sprint_id FROM broker_loads_checked) s USING (sprint_id)
    JOIN session_type t ON t.sess_id = s.sess_id
    JOIN context_files cf ON cf.session_type = t.type
)
SELECT DISTINCT 'agent-sprint' AS subject_kind, sprint_id || '/' || agent AS subject, ts AS occurred_at,
       source_file AS file, line,
       agent || ' loads ' || path || ', already in context since boot (' || type || ' '
           || layer || ')' AS message,
       json_object('path', path, 'session_type', type, 'layer', layer)::VARCHAR AS evidence
FROM boot
WHERE boot_path = path OR ends_with(boot_path, '/' || path) OR ends_with(path, '/' || boot_path);
