-- The observations every trend series is drawn from (issue 43): one row per series and
-- observed session. A weekly or daily point of a series is the mean of its rows in that
-- period (a share, for coach_triggers: rows are 0/1); the change-point scan, its intervals
-- and the comparisons (brainlab/metrics/trends.py) read these rows, never the logs again.
-- Series: health:<category> (SPEC §3.2), ratio (the rolling ratio at the session, §3.3),
-- share:<category> (1 = the session is of that category: the ratio's inputs, §3.3),
-- coach_triggers (§3.3, 1 = fired at boot), tokens_per_session (§3.1), agent_load_cost
-- (the session's agent loads in tokens, §2.5) and agent:<name> (that agent's, 0 where the
-- session did not load it), cost_per_session (USD of a Claude Code session, §7) and
-- logged_gap (tokens measured - logged of a matched log, issue 13). Weeks follow first_day.
CREATE OR REPLACE MACRO trend_observations_for(  -- defaults: brainlab/spec/thresholds.py
    formula := 'v2',
    {{ parameters.signals }},  -- spec/thresholds.py SIGNAL_PARAMETERS
    basis := 'best', first_day := 'monday') AS TABLE
WITH signals AS MATERIALIZED (
    SELECT g.sess_id, g.started_at, g.category, g.health_score, g.ratio, g.coach_triggered,
           s.tokens_used, s.project
    FROM session_signals_for(
        formula := formula, ratio_window := ratio_window, ratio_unit := ratio_unit,
        explore_weight := explore_weight, ratio_healthy := ratio_healthy,
        ratio_watch := ratio_watch, coach_ratio := coach_ratio, coach_health := coach_health,
        coach_last_n := coach_last_n, coach_health_mode := coach_health_mode,
        conserve_peak := conserve_peak, conserve_health := conserve_health,
        conserve_close := conserve_close, saturation_peak_use := saturation_peak_use,
        saturation_peak_build := saturation_peak_build, basis := basis) g
    JOIN basis_sessions(basis := basis) s USING (sess_id)
    WHERE g.started_at IS NOT NULL
), loads AS MATERIALIZED (
    SELECT sess_id, agent, any_value(tokens_estimated) AS tokens
    FROM metabolism_agent_loads GROUP BY ALL
), observations AS (
    SELECT 'health:' || category AS series, 'health' AS metric, sess_id AS subject, started_at,
           project, CAST(health_score AS DOUBLE) AS value
    FROM signals
    WHERE category IN (SELECT category FROM scored_categories) AND health_score IS NOT NULL
    UNION ALL
    SELECT 'ratio', 'ratio', sess_id, started_at, project, CAST(ratio AS DOUBLE)
    FROM signals WHERE ratio IS NOT NULL
    UNION ALL
    SELECT 'share:' || c.category, 'category_share', g.sess_id, g.started_at, g.project,
           CAST(g.category IS NOT DISTINCT FROM c.category AS DOUBLE)
    FROM signals g
    CROSS JOIN (VALUES ('use-brain'), ('build-brain'), ('explore-brain')) c(category)
    UNION ALL
    SELECT 'coach_triggers', 'coach_triggers', sess_id, started_at, project,
           CAST(coalesce(coach_triggered, false) AS DOUBLE)
    FROM signals
    UNION ALL
    SELECT 'tokens_per_session', 'tokens_per_session', sess_id, started_at, project,
           CAST(tokens_used AS DOUBLE)
    FROM signals WHERE tokens_used IS NOT NULL
    UNION ALL
    SELECT 'agent_load_cost', 'agent_load_cost', g.sess_id, any_value(g.started_at),
           any_value(g.project), CAST(coalesce(sum(l.tokens), 0) AS DOUBLE)
    FROM signals g LEFT JOIN loads l USING (sess_id) GROUP BY g.sess_id
    UNION ALL
    SELECT 'agent:' || a.agent, 'agent_load_cost', g.sess_id, g.started_at, g.project,
           CAST(coalesce(l.tokens, 0) AS DOUBLE)
    FROM signals g CROSS JOIN (SELECT DISTINCT agent FROM loads) a
    LEFT JOIN loads l ON l.sess_id = g.sess_id AND l.agent = a.agent
    UNION ALL
    SELECT 'cost_per_session', 'cost_per_session', session_id, first_ts, project,
           CAST(cost_usd AS DOUBLE)
    FROM usage_sessions WHERE first_ts IS NOT NULL AND cost_usd IS NOT NULL
    UNION ALL
    SELECT 'logged_gap', 'logged_gap', sess_id, started_at, NULL, CAST(difference AS DOUBLE)
    FROM session_audit
    WHERE field = 'tokens_used' AND difference IS NOT NULL AND started_at IS NOT NULL
)
SELECT series, metric, subject, started_at,
       CAST(started_at AS DATE)                          AS day,
       week_label(started_at, first_day := first_day)     AS iso_week,
       week_first_day(started_at, first_day := first_day) AS week_start,
       project, value
FROM observations;
