-- One row per change of the rate-limit, context and cost values the status line saw
-- (issues 25, 45):
-- what no transcript holds, appended by `brainlab statusline`, loaded by the next ingest.
CREATE TABLE IF NOT EXISTS limit_snapshots (
    snapshot_at         TIMESTAMP NOT NULL,
    session_id          VARCHAR,
    model_id            VARCHAR,
    five_hour_pct       DOUBLE,
    five_hour_resets_at TIMESTAMP,
    seven_day_pct       DOUBLE,
    seven_day_resets_at TIMESTAMP,
    context_used_pct    DOUBLE,
    context_window_size BIGINT,
    total_cost_usd      DOUBLE,   -- cost.total_cost_usd: what the user saw (issue 45)
    total_input_tokens  BIGINT,   -- context_window.total_input_tokens
    total_output_tokens BIGINT,   -- context_window.total_output_tokens
    source_file         VARCHAR NOT NULL,
    line                BIGINT
);
