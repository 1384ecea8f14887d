-- SPEC §4.5: one row per sprint and planned agent, with what the broker recorded for it.
CREATE OR REPLACE VIEW sprint_agent_inputs AS
WITH s AS (
    SELECT * FROM sprints
    QUALIFY row_number() OVER (PARTITION BY sprint_id ORDER BY source_file, line) = 1
), a AS (
    SELECT * FROM sprint_agents
    QUALIFY row_number() OVER (PARTITION BY sprint_id, agent ORDER BY source_file, line) = 1
)
SELECT a.sprint_id, s.project, coalesce(a.domain, s.domain) AS domain, a.agent,
       s.session_id, s.started_at, s.ended_at, a.open_todos,
       coalesce(a.loaded, r.loaded) AS loaded,
       e.released,
       s.origin,
       CAST(row_number() OVER (ORDER BY s.source_file, s.line, a.line) AS BIGINT) AS seq
FROM a JOIN s USING (sprint_id)
LEFT JOIN broker_recorded_loads r ON r.sprint_id = a.sprint_id AND r.agent = a.agent
LEFT JOIN broker_recorded_releases e ON e.sprint_id = a.sprint_id;
