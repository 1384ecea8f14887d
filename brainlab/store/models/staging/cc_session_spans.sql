-- One row per sessionId: the span of all its lines and of its main chain (agent NULL), its
-- latest working directory and main file. Shared by cc_sessions and cc_measured.
CREATE OR REPLACE VIEW cc_session_spans AS
SELECT session_id, min(first_ts) AS started_at, max(last_ts) AS ended_at,
       min(first_ts) FILTER (WHERE agent_id IS NULL) AS main_started_at,
       max(last_ts) FILTER (WHERE agent_id IS NULL) AS main_ended_at,
       any_value(cwd ORDER BY last_ts DESC) FILTER (WHERE cwd IS NOT NULL) AS cwd,
       any_value(source_file ORDER BY last_ts DESC) FILTER (WHERE agent_id IS NULL)
           AS main_file
FROM cc_spans GROUP BY session_id;
