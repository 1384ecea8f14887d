-- Metabolism sessions (SPEC §3). Layering: raw_metabolism_logs (as parsed) ->
-- stg_metabolism_sessions (views/16, one row per log) and measured_sessions (views/17, one
-- row per transcript) -> basis_sessions(basis) -> scored_sessions(...) (health and saturation
-- recomputed, parameters = SPEC §3.2/§3.3 defaults) -> metabolism_sessions.

-- SPEC §3.2 health_score v1 and v2, SPEC §3.3 saturation_flag by profile.
-- denominator = max(1, tokens_used/1000 * context_peak_pct/100); NULL inputs give NULL.
-- formula: 'v2' (default, by category), 'v1' (one formula) or 'logged' (the scribe's value).
-- health_score = the recomputed score where its inputs exist, else the logged one
-- (health_basis says which). basis: 'best' (default), 'logged' or 'measured' (views/17).
CREATE OR REPLACE MACRO scored_sessions(formula := 'v2', saturation_peak_use := 80,
                                        saturation_peak_build := 85, basis := 'best') AS TABLE
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

-- Metabolism sessions with SPEC defaults (v2 health, saturation 80/85) on the 'best' basis
-- (measured where a transcript exists, else logged; issue 13): what every metabolism metric
-- reads. `sessions` (views/90_sessions.sql) sets logs and transcripts side by side instead.
CREATE OR REPLACE VIEW metabolism_sessions AS SELECT * FROM scored_sessions();

-- SPEC §2.5 agents loaded per session, on a basis like scored_sessions: logged rows are the
-- log's "Agents chargés" list, measured rows the agents/*.md files the transcript read into
-- its context (the SPEC §2.5 price; launched subagents run in their own context and keep
-- their measured cost in transcript_agent_loads). The estimated price is bytes/4 of agents/<agent>.md, falling back to
-- the log's own "~Xk" estimate, or to the bytes the transcript read / 4.
CREATE OR REPLACE MACRO agent_loads_for(basis := 'best') AS TABLE
WITH s AS (
    SELECT sess_id, basis_used, transcript_session FROM basis_sessions(basis := basis)
), known AS (
    SELECT agent, any_value(tokens_estimated) AS tokens_estimated FROM agents GROUP BY agent
), logged AS (
    SELECT l.sess_id, l.agent, coalesce(a.tokens_estimated, l.tokens_logged) AS tokens_estimated,
           l.tokens_logged, a.tokens_estimated IS NOT NULL AS is_known_agent,
           'metabolism' AS source, l.source_file
    FROM raw_agent_loads l
    JOIN s ON s.sess_id = l.sess_id AND s.basis_used = 'logged'
    LEFT JOIN known a ON a.agent = l.agent
), measured AS (
    SELECT s.sess_id, t.agent,
           CAST(coalesce(a.tokens_estimated, t.tokens_estimated) AS BIGINT) AS tokens_estimated,
           CAST(NULL AS BIGINT) AS tokens_logged, a.tokens_estimated IS NOT NULL AS is_known_agent,
           'transcript' AS source, t.source_file
    FROM transcript_agent_loads t
    JOIN s ON s.transcript_session = t.sess_id AND s.basis_used = 'measured'
    LEFT JOIN known a ON a.agent = t.agent
    WHERE t.agent IS NOT NULL AND t.agent <> '' AND t.tokens_estimated IS NOT NULL
)
SELECT * FROM logged UNION ALL BY NAME SELECT * FROM measured;

CREATE OR REPLACE VIEW metabolism_agent_loads AS SELECT * FROM agent_loads_for();
