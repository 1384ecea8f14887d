CREATE TABLE IF NOT EXISTS handoffs (
    source_file   VARCHAR NOT NULL,
    handoff       VARCHAR NOT NULL,
    title         VARCHAR,
    sess_id       VARCHAR,
    handoff_level VARCHAR,
    created_at    VARCHAR,
    fields        VARCHAR
);
