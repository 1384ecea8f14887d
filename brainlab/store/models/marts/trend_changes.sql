-- The change points of every trend series (issue 43 item 2): the rows of `brainlab trends
-- --json`'s `changes` (scale week; --daily adds scale day), as the last scan stored them
-- (raw/trend_change_scan.sql, written by brainlab.store.trend_scan.write), and only while
-- that scan is current (trend_changes_status): after a write it did not see (ingest claude,
-- ingest otel, a live hook) no row is shown, never old change points.
CREATE OR REPLACE VIEW trend_changes AS
SELECT scale, series, metric, period, week, direction, before, after, difference, low, high,
       verdict, scanned_at
FROM trend_change_scan
WHERE (SELECT state FROM trend_changes_status) = 'current';
