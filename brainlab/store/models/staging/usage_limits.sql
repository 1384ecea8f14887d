-- Rate-limit use over time (issue 25): one row per 5-hour or 7-day window Claude Code
-- reported to the status line, named by its reset time rounded to the hour (windows of one
-- kind reset at least 5 hours apart, so a reset time reported with jitter stays one window).
CREATE OR REPLACE VIEW usage_limits AS
WITH w AS (
    SELECT '5h' AS window_kind, date_trunc('hour', five_hour_resets_at + INTERVAL 30 MINUTE) AS resets_at,
           snapshot_at, five_hour_pct AS used_pct
    FROM limit_snapshots WHERE five_hour_pct IS NOT NULL AND five_hour_resets_at IS NOT NULL
    UNION ALL
    SELECT '7d', date_trunc('hour', seven_day_resets_at + INTERVAL 30 MINUTE), snapshot_at, seven_day_pct
    FROM limit_snapshots WHERE seven_day_pct IS NOT NULL AND seven_day_resets_at IS NOT NULL
)
SELECT window_kind,
       resets_at - CASE window_kind WHEN '5h' THEN INTERVAL 5 HOUR ELSE INTERVAL 7 DAY END
           AS window_start,
       resets_at, min(snapshot_at) AS first_seen_at, max(snapshot_at) AS last_seen_at,
       max(used_pct) AS peak_used_pct, arg_max(used_pct, snapshot_at) AS last_used_pct,
       count(*) AS snapshots
FROM w
GROUP BY window_kind, resets_at;
