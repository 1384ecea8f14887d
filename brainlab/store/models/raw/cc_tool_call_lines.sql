-- One row per tool_use block as read (a resumed session may repeat blocks across files).
CREATE TABLE IF NOT EXISTS cc_tool_call_lines (
    session_id             VARCHAR,
    agent_id               VARCHAR,
    ts                     TIMESTAMP,
    tool                   VARCHAR,
    tool_use_id            VARCHAR,
    file_path              VARCHAR,
    pattern                VARCHAR,
    launched_subagent_type VARCHAR,
    command                VARCHAR,
    is_git_commit          BOOLEAN,
    source_file            VARCHAR NOT NULL,
    line                   BIGINT NOT NULL
);
