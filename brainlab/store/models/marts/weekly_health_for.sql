-- SPEC §3.2/§3.3 headline figures per week under the given thresholds; one row per week with
-- sessions. Weeks are ISO weeks, or Sunday weeks when first_day = 'sunday' (spec/weeks.py).
-- last_ratio / last_ratio_band: the rolling ratio at the week's last session (the state the
-- next week boots with).
-- each default is the SPEC value in brainlab/spec/thresholds.py (store/spec_sql.py)
CREATE OR REPLACE MACRO weekly_health_for(
    formula := 'v2',
    {{ parameters.signals }},  -- spec/thresholds.py SIGNAL_PARAMETERS
    basis := 'best',
    first_day := 'monday') AS TABLE
SELECT
    week_label(started_at, first_day := first_day)                AS iso_week,
    week_first_day(started_at, first_day := first_day)            AS week_start,
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
