-- One row per sprint and file that described it (a JSONL record file).
CREATE TABLE IF NOT EXISTS sprints (
    sprint_id   VARCHAR NOT NULL,
    project     VARCHAR,
    domain      VARCHAR,
    session_id  VARCHAR,
    started_at  TIMESTAMP,
    ended_at    TIMESTAMP,
    origin      VARCHAR NOT NULL,
    source_file VARCHAR NOT NULL,
    line        BIGINT
);
