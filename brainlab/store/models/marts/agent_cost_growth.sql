-- SPEC §2.5 trend: least-squares slope of an agent's weekly tokens over week number (weeks
-- where it was not loaded count as 0). is_growing = slope > 0 and the last half of the
-- history costs more than the first half.
CREATE OR REPLACE VIEW agent_cost_growth AS
WITH span AS (
    SELECT DISTINCT week_first_day(started_at) AS week_start
    FROM metabolism_sessions WHERE started_at IS NOT NULL
), numbered AS (
    SELECT week_start, row_number() OVER (ORDER BY week_start) AS week_no,
           count(*) OVER () AS n_weeks
    FROM span
), grid AS (
    SELECT a.agent, n.week_start, n.week_no, n.n_weeks,
           coalesce(c.tokens_total, 0) AS tokens_total
    FROM (SELECT DISTINCT agent FROM agent_weekly_cost) a
    CROSS JOIN numbered n
    LEFT JOIN agent_weekly_cost c ON c.agent = a.agent AND c.week_start = n.week_start
)
SELECT
    agent,
    count(*)                                                          AS weeks,
    sum(tokens_total)                                                 AS tokens_total,
    sum(tokens_total) FILTER (WHERE week_no <= n_weeks / 2)           AS tokens_first_half,
    sum(tokens_total) FILTER (WHERE week_no > n_weeks / 2)            AS tokens_second_half,
    regr_slope(tokens_total, week_no)                                 AS slope_tokens_per_week,
    coalesce(regr_slope(tokens_total, week_no) > 0
        AND sum(tokens_total) FILTER (WHERE week_no > n_weeks / 2)
          > sum(tokens_total) FILTER (WHERE week_no <= n_weeks / 2), false) AS is_growing
FROM grid
GROUP BY agent;
