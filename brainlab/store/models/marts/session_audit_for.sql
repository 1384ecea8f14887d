-- One row per matched log and field. difference = measured - logged (> 0: the log
-- under-reports). Tolerances (parameters, defaults documented in session_audit_for.yml):
-- tokens_used |d| > max(tokens_abs, tokens_rel * measured); context_peak_pct and
-- context_at_close |d| > pct_points; duration_min |d| > max(duration_abs, duration_rel *
-- measured); counts (commits, todos_closed, kernel_files_touched, adrs_written,
-- insights_captured) any difference; health_score (logged vs recomputed from measured inputs,
-- SPEC §3.2) |d| > max(health_abs, health_rel * |measured|); category: logged and measured
-- category differ while the transcript declares a type. disagrees is NULL when a side is
-- missing (a field the log leaves out is not compared).
CREATE OR REPLACE MACRO session_audit_for(tokens_rel := 0.10, tokens_abs := 2000,
                                          pct_points := 5, duration_rel := 0.10,
                                          duration_abs := 10, health_rel := 0.10,
                                          health_abs := 0.05, formula := 'v2') AS TABLE
WITH m AS (
    SELECT sess_id, transcript_session FROM session_matches WHERE match_status = 'matched'
), lg AS (
    SELECT * FROM scored_sessions(formula := formula, basis := 'logged')
), ms AS (
    -- measured inputs; the log's type only where the transcript declares none
    SELECT * FROM scored_sessions(formula := formula, basis := 'best')
    WHERE transcript_session IS NOT NULL
), pairs AS (
    SELECT m.sess_id, m.transcript_session, lg.started_at,
        lg.type AS l_type, ms.type AS m_type, lg.category AS l_cat, ms.category AS m_cat,
        ms.type IS NOT NULL AND mt.type <> 'unknown' AS has_measured_type,
        lg.tokens_used AS l_tokens, ms.tokens_used AS m_tokens,
        lg.context_peak_pct AS l_peak, ms.context_peak_pct AS m_peak,
        lg.context_at_close AS l_close, ms.context_at_close AS m_close,
        lg.duration_min AS l_duration, ms.duration_min AS m_duration,
        lg.commits AS l_commits, ms.commits AS m_commits,
        lg.todos_closed AS l_todos, ms.todos_closed AS m_todos,
        lg.kernel_files_touched AS l_kernel, ms.kernel_files_touched AS m_kernel,
        lg.adrs_written AS l_adrs, ms.adrs_written AS m_adrs,
        lg.insights_captured AS l_insights, ms.insights_captured AS m_insights,
        lg.health_score_logged AS l_health,
        CASE formula WHEN 'v1' THEN lg.health_score_v1 ELSE lg.health_score_v2 END
            AS l_health_recomputed,
        CASE formula WHEN 'v1' THEN ms.health_score_v1 ELSE ms.health_score_v2 END
            AS m_health
    FROM m
    JOIN lg USING (sess_id)
    JOIN ms ON ms.transcript_session = m.transcript_session
    JOIN cc_session_measures mt ON mt.transcript_session = m.transcript_session
), long AS (
    SELECT sess_id, transcript_session, started_at, f.*
    FROM pairs, LATERAL (VALUES
        ('category', NULL, NULL, l_cat, m_cat, NULL),
        ('tokens_used', l_tokens, m_tokens, NULL, NULL, NULL),
        ('context_peak_pct', l_peak, m_peak, NULL, NULL, NULL),
        ('context_at_close', l_close, m_close, NULL, NULL, NULL),
        ('duration_min', l_duration, m_duration, NULL, NULL, NULL),
        ('commits', l_commits, m_commits, NULL, NULL, NULL),
        ('todos_closed', l_todos, m_todos, NULL, NULL, NULL),
        ('kernel_files_touched', l_kernel, m_kernel, NULL, NULL, NULL),
        ('adrs_written', l_adrs, m_adrs, NULL, NULL, NULL),
        ('insights_captured', l_insights, m_insights, NULL, NULL, NULL),
        ('health_score', l_health, m_health, NULL, NULL, l_health_recomputed)
    ) f(field, logged_value, measured_value, logged_text, measured_text,
        recomputed_from_logged)
    WHERE f.field <> 'category' OR has_measured_type
)
SELECT sess_id, transcript_session, started_at, field,
    CAST(logged_value AS DOUBLE) AS logged_value,
    CAST(measured_value AS DOUBLE) AS measured_value,
    CAST(measured_value AS DOUBLE) - CAST(logged_value AS DOUBLE) AS difference,
    logged_text, measured_text, CAST(recomputed_from_logged AS DOUBLE) AS recomputed_from_logged,
    CASE field
        WHEN 'category' THEN logged_text <> measured_text
        WHEN 'tokens_used' THEN abs(measured_value - logged_value)
            > greatest(tokens_abs, tokens_rel * measured_value)
        WHEN 'context_peak_pct' THEN abs(measured_value - logged_value) > pct_points
        WHEN 'context_at_close' THEN abs(measured_value - logged_value) > pct_points
        WHEN 'duration_min' THEN abs(measured_value - logged_value)
            > greatest(duration_abs, duration_rel * measured_value)
        WHEN 'health_score' THEN abs(measured_value - logged_value)
            > greatest(health_abs, health_rel * abs(measured_value))
        ELSE measured_value <> logged_value
    END AS disagrees
FROM long;
