-- Per session: SPEC §3.3 coach auto-trigger at boot (ratio at boot <= coach_ratio, or health
-- below coach_health for each / the mean of the last coach_last_n scored sessions before it),
-- conserve signals (inefficient session, conserve recommended next, narcissistic ratio).
-- "At boot" = from the sessions strictly before this one; the ratio at boot is the rolling
-- ratio as of the previous session.
-- each default is the SPEC value in brainlab/spec/thresholds.py (store/spec_sql.py)
CREATE OR REPLACE MACRO session_signals_for(
    formula := 'v2',
    {{ parameters.signals }},  -- spec/thresholds.py SIGNAL_PARAMETERS
    basis := 'best') AS TABLE
WITH s AS (
    SELECT * FROM scored_sessions(formula := formula, saturation_peak_use := saturation_peak_use,
                                  saturation_peak_build := saturation_peak_build, basis := basis)
    WHERE started_at IS NOT NULL
), r AS (
    SELECT * FROM session_ratio(window_size := ratio_window, unit := ratio_unit,
                                explore_weight := explore_weight, healthy := ratio_healthy,
                                watch := ratio_watch, basis := basis)
), ordered AS (
    SELECT s.*, r.ratio, r.ratio_band, r.n_use, r.n_build, r.n_explore,
        row_number() OVER (ORDER BY s.started_at, s.sess_id) AS rn
    FROM s JOIN r USING (sess_id)
), scored AS (
    SELECT rn, health_score, row_number() OVER (ORDER BY rn) AS hn
    FROM ordered
    WHERE health_score IS NOT NULL
      AND category IN (SELECT category FROM scored_categories)
), boot AS (
    SELECT o.rn,
        lag(o.ratio) OVER (ORDER BY o.rn) AS ratio_at_boot,
        max(sc.hn) OVER (ORDER BY o.rn ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
            AS last_hn
    FROM ordered o LEFT JOIN scored sc ON sc.rn = o.rn
), prev_health AS (
    SELECT b.rn, count(p.hn) AS n_prev, max(p.health_score) AS max_prev,
           avg(p.health_score) AS mean_prev
    FROM boot b
    JOIN scored p ON p.hn <= b.last_hn AND p.hn > b.last_hn - coach_last_n
    GROUP BY b.rn
), flags AS (
    SELECT o.*, b.ratio_at_boot,
        coalesce(b.ratio_at_boot <= coach_ratio, false) AS coach_by_ratio,
        coalesce(h.n_prev = coach_last_n AND CASE coach_health_mode
            WHEN 'mean' THEN h.mean_prev < coach_health
            ELSE h.max_prev < coach_health END, false) AS coach_by_health
    FROM ordered o
    JOIN boot b USING (rn)
    LEFT JOIN prev_health h USING (rn)
)
SELECT
    sess_id, started_at, session_date, type, category, mode, project, health_score,
    health_basis, saturation_flag, context_peak_pct, context_at_close,
    ratio, ratio_band, n_use, n_build, n_explore, ratio_at_boot,
    coach_by_ratio OR coach_by_health AS coach_triggered,
    CASE WHEN coach_by_ratio AND coach_by_health THEN 'ratio+health'
         WHEN coach_by_ratio THEN 'ratio' WHEN coach_by_health THEN 'health' END AS coach_reason,
    coalesce(context_peak_pct > conserve_peak AND health_score < conserve_health, false)
        AS is_inefficient,
    coalesce(context_at_close > conserve_close, false) AS recommend_conserve_next,
    coalesce(ratio < ratio_watch, false) AS is_narcissistic,
    source_file
FROM flags;
