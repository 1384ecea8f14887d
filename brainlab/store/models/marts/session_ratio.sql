-- SPEC §3.3 ratio = n_use / (n_build + 0.5 * n_explore) over a rolling window ending at each
-- session (inclusive). unit 'days': sessions started in the last `window` calendar days;
-- unit 'sessions': the last `window` sessions. >= healthy: healthy, >= watch: watch, below:
-- narcissistic loop. No build/explore session in the window: ratio NULL, band healthy if any use.
-- basis: 'best' (default), 'logged' or 'measured' (issue 13, basis_sessions).
CREATE OR REPLACE MACRO session_ratio(  -- defaults: brainlab/spec/thresholds.py
    window_size := {{ thresholds.ratio_window }},
    unit := {{ thresholds.ratio_window_unit }},
    explore_weight := {{ thresholds.ratio_explore_weight }},
    healthy := {{ thresholds.ratio_healthy }},
    watch := {{ thresholds.ratio_watch }},
    basis := 'best') AS TABLE
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
