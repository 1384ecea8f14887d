-- SPEC §2.2 type -> category; one row per session id (a duplicated log keeps its latest file)
CREATE OR REPLACE VIEW stg_metabolism_sessions AS
SELECT
    l.sess_id,
    l.started_at,
    CAST(l.started_at AS DATE)                       AS session_date,
    lower(trim(l.type))                              AS type,
    CASE WHEN l.type IS NULL THEN 'unknown'
         ELSE coalesce(c.category, 'unknown') END    AS category,
    l.mode,
    l.project,
    l.tokens_used,
    l.context_peak_pct,
    l.context_at_close,
    l.duration_min,
    l.commits,
    l.todos_closed,
    l.kernel_files_touched,
    l.adrs_written,
    l.insights_captured,
    l.handoff_level,
    l.cold_start_kpi_pass,
    l.health_score                                   AS health_score_logged,
    l.saturation_flag                                AS saturation_flag_logged,
    l.log_version,
    l.is_incomplete,
    l.notes,
    l.signals                                        AS signals_logged,
    l.source_file
FROM raw_metabolism_logs l
LEFT JOIN session_categories c ON c.type = lower(trim(l.type))
QUALIFY row_number() OVER (PARTITION BY l.sess_id ORDER BY l.source_file DESC) = 1;
