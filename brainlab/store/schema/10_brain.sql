-- Rows as parsed from a brain checkout (SPEC §2-§5). Every table carries source_file so a
-- changed file's rows can be replaced in one transaction.

-- SPEC §3.1 one row per metabolism log file
CREATE TABLE IF NOT EXISTS raw_metabolism_logs (
    source_file          VARCHAR NOT NULL,
    sess_id              VARCHAR NOT NULL,
    log_date             VARCHAR,
    started_at           TIMESTAMP,
    type                 VARCHAR,
    mode                 VARCHAR,
    project              VARCHAR,
    tokens_used          BIGINT,
    context_peak_pct     DOUBLE,
    context_at_close     DOUBLE,
    duration_min         DOUBLE,
    commits              INTEGER,
    todos_closed         INTEGER,
    saturation_flag      BOOLEAN,
    handoff_level        VARCHAR,
    cold_start_kpi_pass  BOOLEAN,
    health_score         DOUBLE,
    kernel_files_touched INTEGER,
    adrs_written         INTEGER,
    insights_captured    INTEGER,
    log_format           VARCHAR,
    log_version          VARCHAR,
    is_incomplete        BOOLEAN,
    missing_fields       VARCHAR[],
    unparsed_fields      VARCHAR[],
    signals              VARCHAR[],
    notes                VARCHAR,
    extra                VARCHAR
);

-- SPEC §2.5 / §3.1 "Agents chargés": one row per agent listed in a log
CREATE TABLE IF NOT EXISTS raw_agent_loads (
    source_file   VARCHAR NOT NULL,
    sess_id       VARCHAR NOT NULL,
    agent         VARCHAR NOT NULL,
    tokens_logged BIGINT,
    line          INTEGER
);

-- SPEC §3.1 index progression/metabolism/README.md
CREATE TABLE IF NOT EXISTS raw_metabolism_index (
    source_file         VARCHAR NOT NULL,
    line                INTEGER,
    log_date            VARCHAR,
    sess_id             VARCHAR,
    type                VARCHAR,
    mode                VARCHAR,
    health_score        DOUBLE,
    handoff_level       VARCHAR,
    cold_start_kpi_pass BOOLEAN,
    thresholds          VARCHAR
);

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

-- SPEC §2.3 session contexts
CREATE TABLE IF NOT EXISTS session_contexts (
    source_file     VARCHAR NOT NULL,
    session_type    VARCHAR NOT NULL,
    description     VARCHAR,
    boot_files      INTEGER,
    target_l0_pct   DOUBLE,
    target_l1_pct   DOUBLE,
    target_l2_pct   DOUBLE,
    target_boot_pct DOUBLE,
    ttl_hours       DOUBLE
);

CREATE TABLE IF NOT EXISTS context_files (
    source_file  VARCHAR NOT NULL,
    session_type VARCHAR NOT NULL,
    layer        VARCHAR NOT NULL,
    position     INTEGER,
    path         VARCHAR
);

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

CREATE TABLE IF NOT EXISTS handoffs (
    source_file   VARCHAR NOT NULL,
    handoff       VARCHAR NOT NULL,
    title         VARCHAR,
    sess_id       VARCHAR,
    handoff_level VARCHAR,
    created_at    VARCHAR,
    fields        VARCHAR
);

-- SPEC §5 workspaces
CREATE TABLE IF NOT EXISTS workspaces (
    source_file  VARCHAR NOT NULL,
    workspace    VARCHAR NOT NULL,
    project      VARCHAR,
    sprint       VARCHAR,
    readme_lines INTEGER,
    ttl          VARCHAR,
    archive      VARCHAR,
    mode         VARCHAR
);

CREATE TABLE IF NOT EXISTS workspace_files (
    source_file  VARCHAR NOT NULL,
    workspace    VARCHAR NOT NULL,
    file_name    VARCHAR NOT NULL,
    bytes        BIGINT,
    lines        INTEGER,
    active_lines INTEGER
);

CREATE TABLE IF NOT EXISTS decisions (
    source_file    VARCHAR NOT NULL,
    workspace      VARCHAR NOT NULL,
    line           INTEGER NOT NULL,
    is_well_formed BOOLEAN NOT NULL,
    decided_on     VARCHAR,
    decided_time   VARCHAR,
    question       VARCHAR,
    choice         VARCHAR,
    reason         VARCHAR,
    raw_line       VARCHAR
);
