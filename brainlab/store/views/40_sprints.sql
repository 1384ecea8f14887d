-- Sprint replay inputs (SPEC §4.5): what the broker recorded, the contracts (declared or
-- inferred, SPEC §4.1), and one row per sprint and planned agent ready for replay.

-- SPEC §4.2: the last inhale block written for each sprint name (a re-plan replaces the map).
CREATE OR REPLACE VIEW broker_inhales AS
SELECT * FROM broker_blocks
WHERE kind = 'inhale'
QUALIFY row_number() OVER (PARTITION BY sprint
                           ORDER BY ts DESC NULLS LAST, source_file DESC, line DESC) = 1;

-- SPEC §4.3: the last expire block written for each sprint name.
CREATE OR REPLACE VIEW broker_expires AS
SELECT * FROM broker_blocks
WHERE kind = 'expire'
QUALIFY row_number() OVER (PARTITION BY sprint
                           ORDER BY ts DESC NULLS LAST, source_file DESC, line DESC) = 1;

-- SPEC §4.2 source map as recorded: per sprint and agent, the files the broker loaded.
CREATE OR REPLACE VIEW broker_recorded_loads AS
SELECT f.sprint AS sprint_id, f.agent,
       coalesce(list(f.path ORDER BY f.line, f.path) FILTER (WHERE f.action = 'load'),
                []::VARCHAR[]) AS loaded
FROM broker_block_files f JOIN broker_inhales i USING (block_id)
WHERE f.action IN ('agent', 'load')
GROUP BY f.sprint, f.agent;

-- SPEC §4.3 release map and §4.4 breath metrics as the broker printed them, per sprint.
CREATE OR REPLACE VIEW broker_recorded_releases AS
SELECT e.sprint AS sprint_id,
       coalesce(list(f.path ORDER BY f.line, f.path) FILTER (WHERE f.action = 'libérer'),
                []::VARCHAR[]) AS released,
       coalesce(list(f.path ORDER BY f.line, f.path) FILTER (WHERE f.action = 'garder'),
                []::VARCHAR[]) AS kept,
       any_value(e.reason) AS reason,
       any_value(e.context_load) AS context_load,
       any_value(e.stale_ratio) AS stale_ratio,
       any_value(e.breath_depth) AS breath_depth,
       any_value(e.exhale_rate) AS exhale_rate
FROM broker_expires e LEFT JOIN broker_block_files f USING (block_id)
GROUP BY e.sprint;

-- SPEC §4.1: declared contracts, plus a contract inferred from the directory layout of the
-- referenced files (domain = parent directory name) for projects without one; inferred = true.
CREATE OR REPLACE VIEW project_contract_files AS
WITH declared AS (
    SELECT DISTINCT project, domain, path, position FROM project_contracts
), layout AS (
    SELECT DISTINCT s.project, r.path
    FROM sprint_refs r JOIN sprints s USING (sprint_id)
    WHERE s.project IS NOT NULL AND s.project NOT IN (SELECT project FROM declared)
), inferred AS (
    SELECT project,
           coalesce(nullif(regexp_extract(path, '([^/]+)/[^/]*$', 1), ''), '(root)') AS domain,
           path
    FROM layout
)
SELECT project, domain, path, position, false AS inferred FROM declared
UNION ALL
SELECT project, domain, path,
       CAST(row_number() OVER (PARTITION BY project, domain ORDER BY path) - 1 AS INTEGER),
       true
FROM inferred;

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
