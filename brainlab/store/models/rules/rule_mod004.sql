CREATE OR REPLACE VIEW rule_mod004 AS
SELECT 'session' AS subject_kind, session_id AS subject, min(ts) AS occurred_at,
       arg_min(source_file, ts) AS file, arg_min(line, ts) AS line,
       '+' || mode || ' session carried out ' || count(*) || ' ' || action
           || CASE WHEN count(*) > 1 THEN 's' ELSE '' END || ' outside its perimeter'
           || coalesce(' (first: ' || arg_min(path, ts) || ')', '') AS message,
       json_object('mode', mode, 'action', action, 'count', count(*),
                   'paths', list(DISTINCT path) FILTER (WHERE path IS NOT NULL),
                   'perimeter', any_value(perimeter_source))::VARCHAR AS evidence
FROM mode_perimeter_breaches
GROUP BY session_id, mode, action;
