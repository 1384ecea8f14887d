-- What telemetry adds, per week of zone tz starting on first_day (spec/weeks.py): time to first
-- token, permission waits, tool durations, API errors and retries, compactions with their
-- tokens before and after.
CREATE OR REPLACE MACRO otel_weekly_activity_for(first_day := 'monday', tz := 'UTC') AS TABLE
WITH ev AS (
    SELECT week_first_day(timezone(tz, ts AT TIME ZONE 'UTC'), first_day := first_day)
               AS week_start, * FROM otel_events
    QUALIFY row_number() OVER (PARTITION BY coalesce(request_id || event_name,
                                                      file_key || ':' || line || ':' || record)
                               ORDER BY ts, file_key, line, record) = 1
), sp AS (
    SELECT week_first_day(timezone(tz, start_ts AT TIME ZONE 'UTC'), first_day := first_day)
               AS week_start, * FROM otel_spans
    WHERE convention = 'claude_code'
), weeks AS (SELECT week_start FROM ev UNION SELECT week_start FROM sp)
SELECT w.week_start,
       (SELECT count(*) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'api_request') AS api_requests,
       (SELECT median(coalesce(ev.ttft_ms, NULL)) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'api_request') AS event_ttft_ms_median,
       (SELECT median(sp.ttft_ms) FROM sp WHERE sp.week_start = w.week_start
        AND sp.name = 'claude_code.llm_request') AS span_ttft_ms_median,
       (SELECT sum(sp.duration_ms) / 1000.0 FROM sp WHERE sp.week_start = w.week_start
        AND sp.name LIKE '%blocked_on_user%') AS permission_wait_s,
       (SELECT count(*) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'tool_result') AS tool_results,
       (SELECT sum(ev.duration_ms) / 1000.0 FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'tool_result') AS tool_time_s,
       (SELECT count(*) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'api_error') AS api_errors,
       (SELECT count(*) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'api_error' AND attempt > 1) AS retries,
       (SELECT count(*) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'compaction') AS compactions,
       (SELECT CAST(sum(pre_tokens) AS BIGINT) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'compaction') AS compaction_tokens_before,
       (SELECT CAST(sum(post_tokens) AS BIGINT) FROM ev WHERE ev.week_start = w.week_start
        AND event_name = 'compaction') AS compaction_tokens_after
FROM weeks w
WHERE w.week_start IS NOT NULL;
