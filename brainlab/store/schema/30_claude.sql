-- Claude Code transcripts (SPEC §7). Raw tables hold one row per line as read; the global
-- deduplication of API calls and the prices are applied in views/30_claude.sql, so an
-- incremental run (a new tail appended to one file) only appends rows and stays exact.

-- One row per transcript file: how far it has been read (incremental tail reads).
CREATE TABLE IF NOT EXISTS cc_files (
    source_file   VARCHAR PRIMARY KEY,
    layout        VARCHAR,   -- main | subagent | project-agent
    bytes_done    BIGINT NOT NULL,  -- byte offset just after the last complete line read
    lines_done    BIGINT NOT NULL,  -- lines read so far (next line number = lines_done + 1)
    pending_bytes BIGINT NOT NULL,  -- bytes of an unfinished last line left for the next run
    head_sha256   VARCHAR,   -- hash of the first bytes: a rewritten file is read again
    size_seen     BIGINT,
    runs          INTEGER,   -- how many ingest runs read something from this file
    rows_loaded   BIGINT,    -- usage lines (cc_request_lines) the file has contributed
    errors        BIGINT,    -- error and warning rows it has produced
    tail_sha256   VARCHAR,   -- hash of the last 4 KiB read: a file rewritten past it is read again
    mtime_ns      BIGINT,    -- modification time when read: a same-size rewrite is read again
    gone_at       TIMESTAMP  -- UTC time of the first run that did not find it (rows kept); NULL while on disk
);

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
    source_file              VARCHAR NOT NULL,
    line                     BIGINT NOT NULL
);

-- One row per tool_use block as read (a resumed session may repeat blocks across files).
CREATE TABLE IF NOT EXISTS cc_tool_call_lines (
    session_id             VARCHAR,
    agent_id               VARCHAR,
    ts                     TIMESTAMP,
    tool                   VARCHAR,
    tool_use_id            VARCHAR,
    file_path              VARCHAR,
    pattern                VARCHAR,
    launched_subagent_type VARCHAR,
    command                VARCHAR,
    is_git_commit          BOOLEAN,
    source_file            VARCHAR NOT NULL,
    line                   BIGINT NOT NULL
);

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

-- Which subagent was launched by which tool call, and its type when a line or .meta.json says.
CREATE TABLE IF NOT EXISTS cc_agent_links (
    session_id  VARCHAR,
    agent_id    VARCHAR,
    tool_use_id VARCHAR,
    agent_type  VARCHAR,
    source_file VARCHAR NOT NULL,
    line        BIGINT
);

-- One row per compaction boundary (system lines compact_boundary / microcompact_boundary).
CREATE TABLE IF NOT EXISTS cc_compactions (
    session_id  VARCHAR,
    agent_id    VARCHAR,
    ts          TIMESTAMP,
    kind        VARCHAR,
    trigger     VARCHAR,
    pre_tokens  BIGINT,
    source_file VARCHAR NOT NULL,
    line        BIGINT NOT NULL
);

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

-- The price table (package file, or the user's override), loaded at each ingest: one row per
-- model and period of validity (brainlab/store/prices.py); a call takes the row in force on
-- its UTC day.
CREATE TABLE IF NOT EXISTS cc_prices (
    model                    VARCHAR NOT NULL,
    input_usd_mtok           DOUBLE,
    output_usd_mtok          DOUBLE,
    cache_write_5m_usd_mtok  DOUBLE,
    cache_write_1h_usd_mtok  DOUBLE,
    cache_read_usd_mtok      DOUBLE,
    long_context_threshold   BIGINT,
    long_input_multiplier    DOUBLE,
    long_output_multiplier   DOUBLE,
    fast_multiplier          DOUBLE,
    valid_from               DATE,
    valid_until              DATE,
    source                   VARCHAR,
    source_date              DATE,
    prices_as_of             DATE,
    prices_file              VARCHAR
);

-- Metabolism facts a transcript gives beyond usage (issue 13, sources/claude_marks.py):
-- prompt keywords (SPEC §2.7), to-do items and statuses, workspace decision lines; no text.
CREATE TABLE IF NOT EXISTS cc_marks (
    session_id   VARCHAR,
    agent_id     VARCHAR,
    ts           TIMESTAMP,
    kind         VARCHAR,   -- prompt | todo | decisions
    keyword_type VARCHAR,
    keyword_mode VARCHAR,
    keyword_rule VARCHAR,
    item_key     VARCHAR,
    item_status  VARCHAR,
    lines        INTEGER,
    tool_use_id  VARCHAR,
    source_file  VARCHAR NOT NULL,
    line         BIGINT
);

-- cc_measured (views/17_measured.sql) as of the last `ingest claude`: the measured metabolism
-- per transcript session, stored so the matching, the audit and every basis-aware metric
-- read a few hundred rows instead of re-deriving them from the line tables (issue 13).
CREATE TABLE IF NOT EXISTS cc_session_measures (
    transcript_session     VARCHAR PRIMARY KEY,
    started_at             TIMESTAMP,
    ended_at               TIMESTAMP,
    duration_min           DOUBLE,
    cwd                    VARCHAR,
    project                VARCHAR,
    type                   VARCHAR,
    mode                   VARCHAR,
    type_derivation        VARCHAR,
    tokens_used            BIGINT,
    context_peak_pct       DOUBLE,
    context_at_close       DOUBLE,
    context_window_tokens  INTEGER,
    commits                BIGINT,
    todos_closed           BIGINT,
    todos_created          BIGINT,
    decisions_logged       BIGINT,
    kernel_files_touched   BIGINT,
    adrs_written           BIGINT,
    insights_captured      BIGINT,
    agents_loaded          VARCHAR[],
    named_sess_ids         VARCHAR[],
    main_requests          BIGINT,
    source_file            VARCHAR
);

-- cc_usage_groups (views/15_claude.sql) as of the last `ingest claude`: usage per UTC
-- 15-minute bucket, session, main chain or subagent, project and model, so `brainlab usage`
-- reads a few thousand rows instead of deduplicating every request line (issue 12), and
-- re-buckets them into any time zone's days (every zone's offset is a multiple of 15 minutes)
-- or into 5-hour blocks (issue 24). Rewritten by each ingest that changed rows or prices
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
    git_branch            VARCHAR   -- the calls' gitBranch (usage branches)
);
