-- SPEC defaults, with the ISO week before each week's figures beside them (week-over-week).
CREATE OR REPLACE VIEW report_weekly_health AS
SELECT w.*, p.sessions AS prev_sessions, p.mean_health AS prev_mean_health,
       p.coach_triggers AS prev_coach_triggers, p.last_ratio AS prev_last_ratio
FROM weekly_health_for() w
LEFT JOIN weekly_health_for() p ON p.week_start = w.week_start - INTERVAL 7 DAY;
