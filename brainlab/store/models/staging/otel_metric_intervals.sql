-- Metric sums as per-interval values: a delta point is its interval; a cumulative point
-- minus the previous point of its series (same attributes and start time) is its interval
-- (the first point of a series counts whole; a drop means the series restarted). A point
-- exported twice (two files) counts once. Gauges and histograms stay in otel_metric_points.
CREATE OR REPLACE VIEW otel_metric_intervals AS
WITH p AS (
    SELECT * FROM otel_metric_points
    WHERE kind = 'sum' AND value IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY series_key, start_ts, ts
                               ORDER BY file_key, line, record) = 1
), w AS (
    SELECT *, lag(value) OVER s AS previous_value, lag(ts) OVER s AS previous_ts
    FROM p WINDOW s AS (PARTITION BY series_key, start_ts ORDER BY ts)
)
SELECT metric, unit, temporality, series_key,
       CASE WHEN temporality = 'cumulative' THEN coalesce(previous_ts, start_ts)
            ELSE start_ts END AS interval_start,
       ts AS interval_end,
       CASE WHEN temporality = 'cumulative' AND previous_value IS NOT NULL
                 AND value >= previous_value THEN value - previous_value
            ELSE value END AS value,
       session_id, user_email, user_account_uuid, organization_id, model, type, tool_name,
       decision, language, query_source, speed, effort, file_key, line, record
FROM w;
