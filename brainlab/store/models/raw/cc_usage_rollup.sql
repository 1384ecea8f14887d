-- cc_usage_groups (marts/cc_usage_groups.sql) as of the last `ingest claude`: usage per UTC
-- 15-minute bucket, session, main chain or subagent, project and model, so `brainlab usage`
-- reads a few thousand rows instead of deduplicating every request line (issue 12), and
-- re-buckets them into any time zone's days (every zone's offset is a multiple of 15 minutes)
-- or into 5-hour blocks (issue 24); its columns are usage_by's dimensions (issue 40). Rewritten by each ingest that changed rows or prices
-- (brainlab/store/usage_rollup.py).
CREATE TABLE IF NOT EXISTS cc_usage_rollup (
    bucket                TIMESTAMP,
    day                   DATE,
    session_id            VARCHAR,
    is_subagent           BOOLEAN,
    is_nested             BOOLEAN,
    speed                 VARCHAR,
    project               VARCHAR,
    model                 VARCHAR,
    priced_as             VARCHAR,
    input_tokens          BIGINT,
    output_tokens         BIGINT,
    cache_creation_tokens BIGINT,
    cache_read_tokens     BIGINT,
    total_tokens          BIGINT,
    cost_usd              DOUBLE,
    requests              BIGINT,
    unpriced_requests     BIGINT,
    first_ts              TIMESTAMP,
    last_ts               TIMESTAMP,
    reported_cost_usd     DOUBLE,   -- --cost-mode reported: sum of costUSD (0 when absent)
    auto_cost_usd         DOUBLE,   -- --cost-mode auto: costUSD when the line has it, else cost_usd
    git_branch            VARCHAR,  -- the calls' gitBranch (usage branches)
    agent                 VARCHAR,
    ticket                VARCHAR,
    user_name             VARCHAR,
    machine               VARCHAR,
    organization          VARCHAR,
    query_source          VARCHAR,
    agent_name            VARCHAR,
    skill                 VARCHAR,
    plugin                VARCHAR,
    mcp_server            VARCHAR,
    effort                VARCHAR,
    source                VARCHAR  -- usage_by's other dimensions
);
