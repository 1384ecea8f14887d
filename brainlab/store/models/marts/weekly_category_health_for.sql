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
