-- cc_measured (marts/cc_measured.sql) as of the last `ingest claude`: the measured metabolism
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
