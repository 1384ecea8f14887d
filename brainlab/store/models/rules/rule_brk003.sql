-- SPEC §4.3: a stable domain (no open to-do) is released, not kept.
CREATE OR REPLACE VIEW rule_brk003 AS
WITH todos AS (
    SELECT sprint_id, bool_or(len(coalesce(open_todos, [])) > 0) AS has_open_todos,
           flatten(list(coalesce(open_todos, []))) AS open_todos, count(*) AS agents
    FROM sprint_agents GROUP BY sprint_id
)
SELECT DISTINCT 'sprint' AS subject_kind, f.sprint AS subject, e.ts AS occurred_at,
       f.source_file AS file, f.line,
       'keeps ' || f.path || ' although no agent of the sprint has an open to-do' AS message,
       json_object('path', f.path, 'open_todos', t.open_todos)::VARCHAR AS evidence
FROM broker_block_files f JOIN broker_blocks_once e USING (block_id)
JOIN todos t ON t.sprint_id = f.sprint
WHERE e.kind = 'expire' AND f.action = 'garder' AND NOT t.has_open_todos;
