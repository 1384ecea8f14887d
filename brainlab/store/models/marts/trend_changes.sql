-- The change points of every trend series (issue 43 item 2): the rows of `brainlab trends
-- --json`'s `changes` (scale week; --daily adds scale day), as the last ingest's scan stored
-- them (raw/trend_change_scan.sql, written by brainlab.metrics.trends.store_changes).
CREATE OR REPLACE VIEW trend_changes AS
SELECT scale, series, metric, period, week, direction, before, after, difference, low, high,
       verdict, scanned_at
FROM trend_change_scan;
