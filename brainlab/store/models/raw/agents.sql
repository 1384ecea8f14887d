-- SPEC §2.5 agent definitions
CREATE TABLE IF NOT EXISTS agents (
    source_file      VARCHAR NOT NULL,
    agent            VARCHAR NOT NULL,
    declared_name    VARCHAR,
    bytes            BIGINT,
    lines            INTEGER,
    tokens_estimated BIGINT,
    context_tier     VARCHAR,
    status           VARCHAR,
    is_template      BOOLEAN
);
