-- The sessions every metabolism metric reads, on one basis (issue 13 §4, DESIGN "measured
-- beside logged"): 'logged' = the logs; 'measured' = the transcripts (a matched log lends
-- only what a transcript cannot know: handoff, cold-start KPI, logged health); 'best'
-- (default) = measured where a transcript exists (the log's value where the transcript's is
-- missing), else logged; a transcript with no log counts on 'best' only when it declares a
-- brain session type (SPEC §2.7 keyword or §2.3 boot context): any other Claude Code session
-- is not a protocol session (it stays on 'measured' and in `sessions`).
-- `basis_used` says which side each row's measures came from.
CREATE OR REPLACE MACRO basis_sessions(basis := 'best') AS TABLE
WITH both_sides AS (
    SELECT l.sess_id AS log_id, m.transcript_session,
           coalesce(l.sess_id, m.sess_id, m.transcript_session) AS key,
           l.started_at AS l_started_at, m.started_at AS m_started_at,
           l.type AS l_type, nullif(m.type, 'unknown') AS m_type,
           l.mode AS l_mode, m.mode AS m_mode, l.project AS l_project, m.project AS m_project,
           l.tokens_used AS l_tokens, m.tokens_used AS m_tokens,
           l.context_peak_pct AS l_peak, m.context_peak_pct AS m_peak,
           l.context_at_close AS l_close, m.context_at_close AS m_close,
           l.duration_min AS l_duration, m.duration_min AS m_duration,
           l.commits AS l_commits, m.commits AS m_commits,
           l.todos_closed AS l_todos, m.todos_closed AS m_todos,
           l.kernel_files_touched AS l_kernel, m.kernel_files_touched AS m_kernel,
           l.adrs_written AS l_adrs, m.adrs_written AS m_adrs,
           l.insights_captured AS l_insights, m.insights_captured AS m_insights,
           l.handoff_level, l.cold_start_kpi_pass, l.health_score_logged,
           l.saturation_flag_logged, l.log_version, l.is_incomplete, l.notes,
           l.signals_logged, l.source_file AS l_file, m.source_file AS m_file
    FROM stg_metabolism_sessions l
    -- the constant filter lets DuckDB skip the transcripts on the logged basis
    FULL OUTER JOIN (SELECT * FROM measured_sessions WHERE basis <> 'logged') m
      ON m.sess_id = l.sess_id
), picked AS (
    SELECT *,
        CASE basis WHEN 'logged' THEN 'logged' WHEN 'measured' THEN 'measured'
             ELSE CASE WHEN transcript_session IS NOT NULL THEN 'measured' ELSE 'logged' END
        END AS side
    FROM both_sides
    WHERE CASE basis WHEN 'logged' THEN log_id IS NOT NULL
                     WHEN 'measured' THEN transcript_session IS NOT NULL
                     ELSE log_id IS NOT NULL OR m_type IS NOT NULL END
), chosen AS (
    SELECT key AS sess_id, side, transcript_session,
        CASE side WHEN 'logged' THEN l_started_at ELSE coalesce(m_started_at, l_started_at) END
            AS started_at,
        CASE side WHEN 'logged' THEN l_type ELSE coalesce(m_type,
            CASE WHEN basis = 'best' THEN l_type END, 'unknown') END AS type,
        CASE side WHEN 'logged' THEN l_mode
             ELSE coalesce(m_mode, CASE WHEN basis = 'best' THEN l_mode END) END AS mode,
        CASE side WHEN 'logged' THEN l_project ELSE coalesce(l_project, m_project) END AS project,
        CASE side WHEN 'logged' THEN l_tokens ELSE coalesce(m_tokens, l_tokens) END AS tokens_used,
        CASE side WHEN 'logged' THEN l_peak ELSE coalesce(m_peak, l_peak) END AS context_peak_pct,
        CASE side WHEN 'logged' THEN l_close ELSE coalesce(m_close, l_close) END AS context_at_close,
        CASE side WHEN 'logged' THEN l_duration ELSE coalesce(m_duration, l_duration) END
            AS duration_min,
        CASE side WHEN 'logged' THEN l_commits ELSE coalesce(m_commits, l_commits) END AS commits,
        CASE side WHEN 'logged' THEN l_todos ELSE coalesce(m_todos, l_todos) END AS todos_closed,
        CASE side WHEN 'logged' THEN l_kernel ELSE coalesce(m_kernel, l_kernel) END
            AS kernel_files_touched,
        CASE side WHEN 'logged' THEN l_adrs ELSE coalesce(m_adrs, l_adrs) END AS adrs_written,
        CASE side WHEN 'logged' THEN l_insights ELSE coalesce(m_insights, l_insights) END
            AS insights_captured,
        handoff_level, cold_start_kpi_pass, health_score_logged, saturation_flag_logged,
        log_version, is_incomplete, notes, signals_logged,
        CASE side WHEN 'logged' THEN l_file ELSE coalesce(m_file, l_file) END AS source_file
    FROM picked
)
SELECT sess_id, started_at, CAST(started_at AS DATE) AS session_date, chosen.type,
       CASE WHEN chosen.type IS NULL THEN 'unknown' ELSE coalesce(c.category, 'unknown') END
           AS category,
       mode, project, CAST(tokens_used AS BIGINT) AS tokens_used, context_peak_pct,
       context_at_close, duration_min, CAST(commits AS INTEGER) AS commits,
       CAST(todos_closed AS INTEGER) AS todos_closed,
       CAST(kernel_files_touched AS INTEGER) AS kernel_files_touched,
       CAST(adrs_written AS INTEGER) AS adrs_written,
       CAST(insights_captured AS INTEGER) AS insights_captured, handoff_level,
       cold_start_kpi_pass, health_score_logged, saturation_flag_logged, log_version,
       is_incomplete, notes, signals_logged, side AS basis_used, transcript_session, source_file
FROM chosen
LEFT JOIN session_categories c ON c.type = chosen.type;
