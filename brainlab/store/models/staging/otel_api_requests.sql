-- One row per claude_code.api_request event, each request id once (the same event exported
-- to two files counts once): the first by time, then file content and position.
CREATE OR REPLACE VIEW otel_api_requests AS
SELECT *
FROM otel_events
WHERE event_name = 'api_request'
QUALIFY row_number() OVER (
    PARTITION BY coalesce(request_id, file_key || ':' || line || ':' || record)
    ORDER BY ts NULLS LAST, file_key, line, record) = 1;
