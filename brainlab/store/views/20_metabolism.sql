-- Metabolism sessions (SPEC §3). Layering: raw_metabolism_logs (as parsed) ->
-- stg_metabolism_sessions (one row per session, category mapped) -> scored_sessions(...)
-- (health and saturation recomputed, parameters = SPEC §3.2/§3.3 defaults) -> sessions.

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

-- SPEC §3.2 health_score v1 and v2, SPEC §3.3 saturation_flag by profile.
-- denominator = max(1, tokens_used/1000 * context_peak_pct/100); NULL inputs give NULL.
-- formula: 'v2' (default, by category), 'v1' (one formula) or 'logged' (the scribe's value).
-- health_score = the recomputed score where its inputs exist, else the logged one
-- (health_basis says which).
CREATE OR REPLACE MACRO scored_sessions(formula := 'v2', saturation_peak_use := 80,
                                        saturation_peak_build := 85) AS TABLE
WITH base AS (
    SELECT s.*,
        greatest(1, s.tokens_used / 1000.0 * s.context_peak_pct / 100.0) AS denominator
    FROM stg_metabolism_sessions s
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
    'metabolism' AS source,
    source_file
FROM chosen;

-- Sessions from metabolism logs with SPEC defaults (v2 health, saturation 80/85): what every
-- metabolism metric reads. `sessions` (views/90_sessions.sql) adds transcript sessions.
CREATE OR REPLACE VIEW metabolism_sessions AS SELECT * FROM scored_sessions();

-- SPEC §2.5 agents loaded per session, with the estimated price bytes/4 from agents/*.md
-- (falling back to the log's own "~Xk" estimate when the agent file is unknown).
CREATE OR REPLACE VIEW metabolism_agent_loads AS
SELECT
    l.sess_id,
    l.agent,
    coalesce(a.tokens_estimated, l.tokens_logged) AS tokens_estimated,
    l.tokens_logged,
    a.tokens_estimated IS NOT NULL                AS is_known_agent,
    'metabolism'                                  AS source,
    l.source_file
FROM raw_agent_loads l
LEFT JOIN (SELECT agent, any_value(tokens_estimated) AS tokens_estimated
           FROM agents GROUP BY agent) a ON a.agent = l.agent;
