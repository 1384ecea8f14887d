-- One row per tool call (tool_use id seen once even when a resumed session repeats it).
CREATE OR REPLACE VIEW cc_tool_calls AS
SELECT t.session_id, t.agent_id, a.subagent_type, t.ts, t.tool, t.tool_use_id, t.file_path,
       t.pattern, t.launched_subagent_type, t.command, t.is_git_commit,
       r.result_bytes, r.is_error AS result_is_error, t.source_file, t.line
FROM cc_tool_call_lines t
LEFT JOIN cc_agents a ON a.session_id = t.session_id AND a.agent_id = t.agent_id
LEFT JOIN (SELECT tool_use_id, max(result_bytes) AS result_bytes, bool_or(is_error) AS is_error
           FROM cc_tool_results WHERE tool_use_id IS NOT NULL GROUP BY tool_use_id) r
  ON r.tool_use_id = t.tool_use_id
QUALIFY t.tool_use_id IS NULL
     OR row_number() OVER (PARTITION BY t.tool_use_id
                           ORDER BY t.ts NULLS LAST, t.source_file, t.line) = 1;
