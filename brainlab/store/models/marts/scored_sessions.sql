-- SPEC §3.2 health_score v1 and v2, SPEC §3.3 saturation_flag by profile.
-- denominator = max(1, tokens_used/1000 * context_peak_pct/100); NULL inputs give NULL.
-- formula: 'v2' (default, by category), 'v1' (one formula) or 'logged' (the scribe's value).
-- health_score = the recomputed score where its inputs exist, else the logged one
-- (health_basis says which). basis: 'best' (default), 'logged' or 'measured' (basis_sessions).
CREATE OR REPLACE MACRO scored_sessions(  -- defaults: brainlab/spec/thresholds.py
    formula := 'v2',
    saturation_peak_use := {{ thresholds.saturation_peak_use }},
    saturation_peak_build := {{ thresholds.saturation_peak_build }},
    basis := 'best') AS TABLE
WITH base AS (
    SELECT s.*,
        greatest(1, s.tokens_used / 1000.0 * s.context_peak_pct / 100.0) AS denominator
    FROM basis_sessions(basis := basis) s
), scored AS (
    SELECT base.*,
        (coalesce(todos_closed, 0) * 10 + commits * 5) / denominator AS health_score_v1,
        CASE category
            WHEN 'use-brain'     THEN (coalesce(todos_closed, 0) * 10 + commits * 5) / denominator
            WHEN 'build-brain'   THEN (kernel_files_touched * 15 + adrs_written * 20) / denominator
            WHEN 'explore-brain' THEN (insights_captured * 8 + duration_min * 0.1) / denominator
        END AS health_score_v2
    FROM base
), chosen AS (
    SELECT scored.*,
        CASE formula WHEN 'v1' THEN health_score_v1 WHEN 'v2' THEN health_score_v2 END
            AS health_score_recomputed
    FROM scored
)
SELECT
    sess_id, started_at, session_date, type, category, mode, project,
    tokens_used, context_peak_pct, context_at_close, duration_min, commits, todos_closed,
    kernel_files_touched, adrs_written, insights_captured, handoff_level, cold_start_kpi_pass,
    health_score_logged,
    health_score_v1,
    health_score_v2,
    coalesce(health_score_recomputed, health_score_logged) AS health_score,
    CASE WHEN health_score_recomputed IS NOT NULL THEN 'recomputed-' || formula
         WHEN health_score_logged IS NOT NULL THEN 'logged' END AS health_basis,
    CASE WHEN health_score_recomputed IS NOT NULL AND health_score_logged IS NOT NULL
         THEN abs(health_score_recomputed - health_score_logged) > 0.01 END AS is_health_disputed,
    CASE
        WHEN formula = 'v1' THEN
            CASE WHEN type = 'brainstorm' THEN false
                 ELSE context_peak_pct > saturation_peak_use AND coalesce(todos_closed, 0) = 0 END
        WHEN category = 'use-brain'
            THEN context_peak_pct > saturation_peak_use AND coalesce(todos_closed, 0) = 0
        WHEN category = 'build-brain'
            THEN context_peak_pct > saturation_peak_build AND kernel_files_touched = 0
        WHEN category = 'explore-brain' THEN false
    END AS saturation_flag,
    saturation_flag_logged,
    log_version, is_incomplete, notes, signals_logged,
    CASE basis_used WHEN 'measured' THEN 'transcript' ELSE 'metabolism' END AS source,
    basis_used, transcript_session,
    source_file
FROM chosen;
