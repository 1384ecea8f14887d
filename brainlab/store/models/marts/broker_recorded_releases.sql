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
