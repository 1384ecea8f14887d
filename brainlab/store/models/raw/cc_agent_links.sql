-- Which subagent was launched by which tool call, and its type when a line or .meta.json says.
CREATE TABLE IF NOT EXISTS cc_agent_links (
    session_id  VARCHAR,
    agent_id    VARCHAR,
    tool_use_id VARCHAR,
    agent_type  VARCHAR,
    source_file VARCHAR NOT NULL,
    line        BIGINT
);
