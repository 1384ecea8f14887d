-- Subagent type per (session, agent): a .meta.json or toolUseResult says it directly, else
-- the Task/Agent tool call that launched it (linked by tool_use_id) does.
CREATE OR REPLACE VIEW cc_agents AS
WITH links AS (
    SELECT l.session_id, l.agent_id, l.agent_type AS direct_type,
           t.launched_subagent_type AS launched_type, l.tool_use_id
    FROM cc_agent_links l
    LEFT JOIN (SELECT DISTINCT tool_use_id, launched_subagent_type FROM cc_tool_call_lines
               WHERE launched_subagent_type IS NOT NULL) t USING (tool_use_id)
)
SELECT session_id, agent_id,
       coalesce(max(direct_type), max(launched_type)) AS subagent_type,
       max(tool_use_id) AS launched_by_tool_use_id
FROM links
WHERE agent_id IS NOT NULL
GROUP BY session_id, agent_id;
