-- SPEC §4.2 source map as recorded: per sprint and agent, the files the broker loaded.
CREATE OR REPLACE VIEW broker_recorded_loads AS
SELECT f.sprint AS sprint_id, f.agent,
       coalesce(list(f.path ORDER BY f.line, f.path) FILTER (WHERE f.action = 'load'),
                []::VARCHAR[]) AS loaded
FROM broker_block_files f JOIN broker_inhales i USING (block_id)
WHERE f.action IN ('agent', 'load')
GROUP BY f.sprint, f.agent;
