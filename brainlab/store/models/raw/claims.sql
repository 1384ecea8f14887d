-- SPEC §2.6 claims
CREATE TABLE IF NOT EXISTS claims (
    source_file   VARCHAR NOT NULL,
    sess_id       VARCHAR NOT NULL,
    type          VARCHAR,
    scope         VARCHAR,
    agent         VARCHAR,
    status        VARCHAR,
    opened_at     TIMESTAMP,
    closed_at     TIMESTAMP,
    expires_at    TIMESTAMP,
    ttl_hours     DOUBLE,
    handoff_level VARCHAR,
    story_angle   VARCHAR,
    result_status VARCHAR,
    zone          VARCHAR,
    mode          VARCHAR,
    key_style     VARCHAR
);
