-- First/last timestamp and line count per (session, agent) for each read of each file.
CREATE TABLE IF NOT EXISTS cc_spans (
    session_id  VARCHAR,
    agent_id    VARCHAR,
    first_ts    TIMESTAMP,
    last_ts     TIMESTAMP,
    lines       BIGINT,
    cwd         VARCHAR,
    source_file VARCHAR NOT NULL
);
