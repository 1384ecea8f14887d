-- One row per inhale or expire block the broker wrote (seeds/context-broker.md.txt formats).
CREATE TABLE IF NOT EXISTS broker_blocks (
    block_id     VARCHAR NOT NULL,
    kind         VARCHAR NOT NULL,
    sprint       VARCHAR NOT NULL,
    project      VARCHAR,
    mode         VARCHAR,
    reason       VARCHAR,
    context_load DOUBLE,
    stale_ratio  DOUBLE,
    breath_depth INTEGER,
    exhale_rate  DOUBLE,
    ts           TIMESTAMP,
    session_id   VARCHAR,
    agent_id     VARCHAR,
    source_file  VARCHAR NOT NULL,
    line         BIGINT
);
