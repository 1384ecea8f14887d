-- SPEC §3.2 mean health score per week (ISO, or Sunday weeks: first_day) and metabolism
-- category (scored categories only).
CREATE OR REPLACE MACRO weekly_category_health_for(formula := 'v2', basis := 'best',
                                                   first_day := 'monday') AS TABLE
SELECT
    week_label(started_at, first_day := first_day)      AS iso_week,
    week_first_day(started_at, first_day := first_day)  AS week_start,
    category,
    count(*)                                            AS sessions,
    avg(health_score)                                   AS mean_health
FROM scored_sessions(formula := formula, basis := basis)
WHERE started_at IS NOT NULL AND category IN (SELECT category FROM scored_categories)
GROUP BY ALL;
