-- A session is "bad" when it saturates (SPEC §3.3 saturation_flag, SPEC defaults 80/85) or
-- when the next scored session's health_score (SPEC §3.2 v2) is below bad_health (default
-- 0.80, the SPEC §3.3 coach health threshold). "Next scored session" = the next session in
-- (started_at, sess_id) order with a category of use-, build- or explore-brain and a health
-- score. is_bad is NULL (unlabelled) when the session did not saturate and no scored session
-- follows it.
CREATE OR REPLACE MACRO session_outcomes_for(bad_health := {{ thresholds.coach_health }}) AS TABLE
WITH s AS (
    SELECT sess_id, started_at, category, health_score, saturation_flag,
        CASE WHEN health_score IS NOT NULL
              AND category IN (SELECT category FROM scored_categories)
             THEN health_score END AS scored_health,
        CASE WHEN health_score IS NOT NULL
              AND category IN (SELECT category FROM scored_categories)
             THEN sess_id END AS scored_id
    FROM metabolism_sessions
    WHERE started_at IS NOT NULL
), nxt AS (
    SELECT s.*,
        lead(scored_id IGNORE NULLS) OVER w     AS next_sess_id,
        lead(scored_health IGNORE NULLS) OVER w AS next_health_score
    FROM s
    WINDOW w AS (ORDER BY started_at, sess_id)
)
SELECT
    sess_id,
    started_at,
    week_first_day(started_at)               AS week_start,
    week_label(started_at)         AS iso_week,
    category,
    health_score,
    coalesce(saturation_flag, false)                           AS is_saturated,
    next_sess_id,
    next_health_score,
    next_health_score < bad_health                             AS is_next_unhealthy,
    CASE WHEN coalesce(saturation_flag, false) THEN true
         WHEN next_health_score IS NULL THEN NULL
         ELSE next_health_score < bad_health END               AS is_bad,
    CASE WHEN coalesce(saturation_flag, false) AND next_health_score < bad_health
              THEN 'saturated+next-unhealthy'
         WHEN coalesce(saturation_flag, false) THEN 'saturated'
         WHEN next_health_score < bad_health THEN 'next-unhealthy' END AS bad_reason
FROM nxt;
