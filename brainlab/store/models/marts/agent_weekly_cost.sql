-- SPEC §2.5 price per load = bytes/4 (agent_loads.tokens_estimated); one row per week and agent.
CREATE OR REPLACE VIEW agent_weekly_cost AS
WITH loads AS (
    SELECT l.sess_id, l.agent, any_value(l.tokens_estimated) AS tokens_estimated
    FROM metabolism_agent_loads l GROUP BY l.sess_id, l.agent
), weeks AS (
    SELECT week_first_day(started_at) AS week_start,
           count(*) AS week_sessions
    FROM metabolism_sessions WHERE started_at IS NOT NULL GROUP BY 1
)
SELECT
    week_first_day(s.started_at)        AS week_start,
    week_label(s.started_at)  AS iso_week,
    l.agent,
    count(DISTINCT l.sess_id)                             AS sessions_loaded,
    any_value(w.week_sessions)                            AS week_sessions,
    count(DISTINCT l.sess_id) / any_value(w.week_sessions) AS share_of_week_sessions,
    sum(l.tokens_estimated)                               AS tokens_total
FROM loads l
JOIN metabolism_sessions s USING (sess_id)
JOIN weeks w ON w.week_start = week_first_day(s.started_at)
WHERE s.started_at IS NOT NULL
GROUP BY ALL;
