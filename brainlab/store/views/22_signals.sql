-- Metabolism signals and triggers (SPEC §3.3). Every threshold is a macro parameter whose
-- default is the SPEC value; brainlab.metrics passes a Thresholds set through.

-- SPEC §3.3 ratio = n_use / (n_build + 0.5 * n_explore) over a rolling window ending at each
-- session (inclusive). unit 'days': sessions started in the last `window` calendar days;
-- unit 'sessions': the last `window` sessions. >= healthy: healthy, >= watch: watch, below:
-- narcissistic loop. No build/explore session in the window: ratio NULL, band healthy if any use.
-- basis: 'best' (default), 'logged' or 'measured' (issue 13, views/17_measured.sql).
CREATE OR REPLACE MACRO session_ratio(window_size := 7, unit := 'days', explore_weight := 0.5,
                                      healthy := 1.0, watch := 0.5, basis := 'best') AS TABLE
WITH s AS (
    SELECT sess_id, started_at, category,
           row_number() OVER (ORDER BY started_at, sess_id) AS rn
    FROM basis_sessions(basis := basis) WHERE started_at IS NOT NULL
), counts AS (
    SELECT cur.sess_id, cur.started_at, cur.rn,
        count(*) FILTER (WHERE prev.category = 'use-brain')     AS n_use,
        count(*) FILTER (WHERE prev.category = 'build-brain')   AS n_build,
        count(*) FILTER (WHERE prev.category = 'explore-brain') AS n_explore,
        count(*)                                                AS n_window
    FROM s cur
    JOIN s prev ON prev.rn <= cur.rn AND (
        (unit = 'sessions' AND prev.rn > cur.rn - window_size)
        OR (unit = 'days' AND prev.started_at > cur.started_at - to_days(CAST(window_size AS INTEGER))))
    GROUP BY cur.sess_id, cur.started_at, cur.rn
)
SELECT sess_id, started_at, n_use, n_build, n_explore, n_window,
    n_use / nullif(n_build + explore_weight * n_explore, 0) AS ratio,
    CASE
        WHEN n_build + explore_weight * n_explore = 0 THEN CASE WHEN n_use > 0 THEN 'healthy' END
        WHEN n_use / (n_build + explore_weight * n_explore) >= healthy THEN 'healthy'
        WHEN n_use / (n_build + explore_weight * n_explore) >= watch THEN 'watch'
        ELSE 'narcissistic-loop'
    END AS ratio_band
FROM counts;

-- Per session: SPEC §3.3 coach auto-trigger at boot (ratio at boot <= coach_ratio, or health
-- below coach_health for each / the mean of the last coach_last_n scored sessions before it),
-- conserve signals (inefficient session, conserve recommended next, narcissistic ratio).
-- "At boot" = from the sessions strictly before this one; the ratio at boot is the rolling
-- ratio as of the previous session.
CREATE OR REPLACE MACRO session_signals_for(
    formula := 'v2', ratio_window := 7, ratio_unit := 'days', explore_weight := 0.5,
    ratio_healthy := 1.0, ratio_watch := 0.5, coach_ratio := 0.40, coach_health := 0.80,
    coach_last_n := 3, coach_health_mode := 'each', conserve_peak := 70, conserve_health := 1.0,
    conserve_close := 60, saturation_peak_use := 80, saturation_peak_build := 85,
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
      AND category IN ('use-brain', 'build-brain', 'explore-brain')
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

CREATE OR REPLACE VIEW session_signals AS SELECT * FROM session_signals_for();

-- SPEC §3.3 cold-start KPI: sessions with handoff_level NO and a measured pass; pass rate
-- over the last `window` such sessions (inclusive); >= stable: stable, >= watch: watch,
-- else: enrich the constitution.
CREATE OR REPLACE MACRO cold_start_kpi_for(window_size := 7, stable := 0.80, watch := 0.60) AS TABLE
WITH m AS (
    SELECT sess_id, started_at, cold_start_kpi_pass,
           row_number() OVER (ORDER BY started_at, sess_id) AS k
    FROM metabolism_sessions
    WHERE upper(handoff_level) = 'NO' AND cold_start_kpi_pass IS NOT NULL
), rates AS (
    SELECT cur.sess_id, cur.started_at, cur.cold_start_kpi_pass,
        count(*) AS measured,
        count(*) FILTER (WHERE p.cold_start_kpi_pass) AS passes
    FROM m cur JOIN m p ON p.k <= cur.k AND p.k > cur.k - window_size
    GROUP BY cur.sess_id, cur.started_at, cur.cold_start_kpi_pass
)
SELECT *, passes / measured AS pass_rate,
    CASE WHEN passes / measured >= stable THEN 'stable'
         WHEN passes / measured >= watch THEN 'watch'
         ELSE 'enrich-constitution' END AS status
FROM rates;

CREATE OR REPLACE VIEW cold_start_kpi AS SELECT * FROM cold_start_kpi_for();

-- weekly_health (one row per ISO week) is weekly_health_for() with SPEC defaults: views/70_report.sql.
