-- SPEC §2.5 price per agent, both ways: estimated = bytes of agents/<agent>.md read / 4;
-- measured = the tokens and cost of the session's subagents of that type.
CREATE OR REPLACE VIEW transcript_agent_loads AS
WITH estimated AS (
    SELECT session_id, regexp_extract(file_path, 'agents/([^/]+)\.md$', 1) AS agent,
           max(result_bytes) / 4.0 AS tokens_estimated, any_value(source_file) AS source_file
    FROM cc_tool_calls
    WHERE tool = 'Read' AND regexp_matches(file_path, '(^|/)agents/[^/]+\.md$')
    GROUP BY ALL
), measured AS (
    SELECT session_id, subagent_type AS agent,
           CAST(sum(input_tokens + output_tokens + cache_creation_tokens + cache_read_tokens)
               AS BIGINT) AS tokens_measured,
           sum(cost_usd) AS cost_usd_measured, any_value(source_file) AS source_file
    FROM cc_requests
    WHERE agent_id IS NOT NULL AND subagent_type IS NOT NULL
    GROUP BY ALL
)
SELECT coalesce(e.session_id, m.session_id) AS sess_id, coalesce(e.agent, m.agent) AS agent,
       e.tokens_estimated, m.tokens_measured, m.cost_usd_measured,
       coalesce(e.source_file, m.source_file) AS source_file, 'transcript' AS source
FROM estimated e
FULL OUTER JOIN measured m ON m.session_id = e.session_id AND m.agent = e.agent;
