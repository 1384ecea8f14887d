-- What telemetry adds, per ISO week of UTC: time to first token, permission waits, tool
-- durations, API errors and retries, compactions with their tokens before and after.
CREATE OR REPLACE VIEW otel_weekly_activity AS
SELECT * FROM otel_weekly_activity_for();
