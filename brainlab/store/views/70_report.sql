-- Weekly report figures (DESIGN §3 "Reports stand alone"): the per-week headline of
-- weekly_health, but under any threshold set (SPEC §3.2 health, §3.3 signals), and health
-- by category per week. The thresholds pass straight through to session_signals_for.

-- SPEC §3.2/§3.3 headline figures per ISO week under the given thresholds; one row per ISO
-- week with sessions. last_ratio / last_ratio_band: the rolling ratio at the week's last
-- session (the state the next week boots with).
CREATE OR REPLACE MACRO weekly_health_for(
    formula := 'v2', ratio_window := 7, ratio_unit := 'days', explore_weight := 0.5,
    ratio_healthy := 1.0, ratio_watch := 0.5, coach_ratio := 0.40, coach_health := 0.80,
    coach_last_n := 3, coach_health_mode := 'each', conserve_peak := 70, conserve_health := 1.0,
    conserve_close := 60, saturation_peak_use := 80, saturation_peak_build := 85,
    basis := 'best') AS TABLE
SELECT
    strftime(date_trunc('week', started_at), '%G-W%V')            AS iso_week,
    CAST(date_trunc('week', started_at) AS DATE)                 AS week_start,
    count(*)                                                      AS sessions,
    count(*) FILTER (WHERE category = 'use-brain')                AS n_use,
    count(*) FILTER (WHERE category = 'build-brain')              AS n_build,
    count(*) FILTER (WHERE category = 'explore-brain')            AS n_explore,
    avg(health_score)                                             AS mean_health,
    median(health_score)                                          AS median_health,
    count(*) FILTER (WHERE saturation_flag)                       AS saturated,
    count(*) FILTER (WHERE coach_triggered)                       AS coach_triggers,
    count(*) FILTER (WHERE is_inefficient)                        AS inefficient,
    count(*) FILTER (WHERE recommend_conserve_next)               AS conserve_next,
    count(*) FILTER (WHERE is_narcissistic)                       AS narcissistic,
    min(ratio)                                                    AS min_ratio,
    arg_max(ratio, started_at)                                    AS last_ratio,
    arg_max(ratio_band, started_at)                               AS last_ratio_band
FROM session_signals_for(
    formula := formula, ratio_window := ratio_window, ratio_unit := ratio_unit,
    explore_weight := explore_weight, ratio_healthy := ratio_healthy, ratio_watch := ratio_watch,
    coach_ratio := coach_ratio, coach_health := coach_health, coach_last_n := coach_last_n,
    coach_health_mode := coach_health_mode, conserve_peak := conserve_peak,
    conserve_health := conserve_health, conserve_close := conserve_close,
    saturation_peak_use := saturation_peak_use, saturation_peak_build := saturation_peak_build,
    basis := basis)
GROUP BY ALL;

-- One row per ISO week with sessions, SPEC thresholds: the headline figures the demo prints.
CREATE OR REPLACE VIEW weekly_health AS
SELECT * EXCLUDE (last_ratio, last_ratio_band) FROM weekly_health_for();

-- SPEC defaults, with the ISO week before each week's figures beside them (week-over-week).
CREATE OR REPLACE VIEW report_weekly_health AS
SELECT w.*, p.sessions AS prev_sessions, p.mean_health AS prev_mean_health,
       p.coach_triggers AS prev_coach_triggers, p.last_ratio AS prev_last_ratio
FROM weekly_health_for() w
LEFT JOIN weekly_health_for() p ON p.week_start = w.week_start - INTERVAL 7 DAY;

-- SPEC §3.2 mean health score per ISO week and metabolism category (scored categories only).
CREATE OR REPLACE MACRO weekly_category_health_for(formula := 'v2', basis := 'best') AS TABLE
SELECT
    strftime(date_trunc('week', started_at), '%G-W%V')  AS iso_week,
    CAST(date_trunc('week', started_at) AS DATE)       AS week_start,
    category,
    count(*)                                            AS sessions,
    avg(health_score)                                   AS mean_health
FROM scored_sessions(formula := formula, basis := basis)
WHERE started_at IS NOT NULL AND category IN ('use-brain', 'build-brain', 'explore-brain')
GROUP BY ALL;

CREATE OR REPLACE VIEW weekly_category_health AS SELECT * FROM weekly_category_health_for();
