-- Transcript sessions in the shape of the protocol's `sessions` view (source = 'transcript');
-- what a transcript cannot know (type, todos, handoff, health) is NULL.
CREATE OR REPLACE VIEW transcript_sessions AS
SELECT session_id AS sess_id, started_at, CAST(started_at AS DATE) AS session_date,
       CAST(NULL AS VARCHAR) AS type,
       CAST(NULL AS VARCHAR) AS category, CAST(NULL AS VARCHAR) AS mode, project,
       CAST(tokens_used AS DOUBLE) AS tokens_used, context_peak_pct, context_at_close,
       duration_min, commits, CAST(NULL AS INTEGER) AS todos_closed,
       CAST(NULL AS VARCHAR) AS handoff_level, CAST(NULL AS BOOLEAN) AS cold_start_kpi_pass,
       CAST(NULL AS DOUBLE) AS health_score_logged, CAST(NULL AS DOUBLE) AS health_score,
       CAST(NULL AS BOOLEAN) AS saturation_flag, source_file,
       'transcript' AS source
FROM cc_sessions;
