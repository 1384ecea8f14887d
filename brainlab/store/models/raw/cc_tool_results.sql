-- One row per tool_result block: its size only, never its content.
CREATE TABLE IF NOT EXISTS cc_tool_results (
    session_id   VARCHAR,
    agent_id     VARCHAR,
    tool_use_id  VARCHAR,
    ts           TIMESTAMP,
    result_bytes BIGINT,
    is_error     BOOLEAN,
    source_file  VARCHAR NOT NULL,
    line         BIGINT
);
