-- API usage lines (assistant lines and usage nested in progress lines) BEFORE the global
-- deduplication: one API call is often several lines (SPEC §7); within one read of one file
-- only the line the rule keeps is stored, across files and reads the view decides.
CREATE TABLE IF NOT EXISTS cc_request_lines (
    session_id               VARCHAR,
    agent_id                 VARCHAR,
    request_id               VARCHAR,
    message_id               VARCHAR,
    model                    VARCHAR,
    ts                       TIMESTAMP,
    input_tokens             BIGINT,
    output_tokens            BIGINT,
    cache_creation_tokens    BIGINT,
    cache_creation_5m_tokens BIGINT,
    cache_creation_1h_tokens BIGINT,
    cache_read_tokens        BIGINT,
    speed                    VARCHAR,
    is_nested                BOOLEAN,
    cwd                      VARCHAR,
    reported_cost_usd        DOUBLE,   -- the line's own costUSD (older versions); NULL if none
    git_branch               VARCHAR,  -- the line's gitBranch (redacted, 200 characters)
    plugin                   VARCHAR,  -- the line's attributionPlugin (issue 45 rule 6)
    skill                    VARCHAR,  -- the line's attributionSkill (issue 45 rule 6)
    price_version            BIGINT,   -- cc_prices version in force at its ingest (issue 45)
    source_file              VARCHAR NOT NULL,
    line                     BIGINT NOT NULL
);
