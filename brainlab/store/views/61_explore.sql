-- Agent cost over time (SPEC §2.5: "the point is the trend over about 10 sessions"), for the
-- exploration notebook: what each agent costs per ISO week and whether that cost grows.

-- SPEC §2.5 price per load = bytes/4 (agent_loads.tokens_estimated); one row per week and agent.
CREATE OR REPLACE VIEW agent_weekly_cost AS
WITH loads AS (
    SELECT l.sess_id, l.agent, any_value(l.tokens_estimated) AS tokens_estimated
    FROM metabolism_agent_loads l GROUP BY l.sess_id, l.agent
), weeks AS (
    SELECT CAST(date_trunc('week', started_at) AS DATE) AS week_start,
           count(*) AS week_sessions
    FROM metabolism_sessions WHERE started_at IS NOT NULL GROUP BY 1
)
SELECT
    CAST(date_trunc('week', s.started_at) AS DATE)        AS week_start,
    strftime(date_trunc('week', s.started_at), '%G-W%V')  AS iso_week,
    l.agent,
    count(DISTINCT l.sess_id)                             AS sessions_loaded,
    any_value(w.week_sessions)                            AS week_sessions,
    count(DISTINCT l.sess_id) / any_value(w.week_sessions) AS share_of_week_sessions,
    sum(l.tokens_estimated)                               AS tokens_total
FROM loads l
JOIN metabolism_sessions s USING (sess_id)
JOIN weeks w ON w.week_start = CAST(date_trunc('week', s.started_at) AS DATE)
WHERE s.started_at IS NOT NULL
GROUP BY ALL;

-- SPEC §2.5 trend: least-squares slope of an agent's weekly tokens over week number (weeks
-- where it was not loaded count as 0). is_growing = slope > 0 and the last half of the
-- history costs more than the first half.
CREATE OR REPLACE VIEW agent_cost_growth AS
WITH span AS (
    SELECT DISTINCT CAST(date_trunc('week', started_at) AS DATE) AS week_start
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
