-- SPEC §5 lifecycle: TTL = sprint end (the workspace's last decision) + ttl (default 7d).
CREATE OR REPLACE VIEW workspace_lifecycle AS
WITH last_decision AS (
    SELECT workspace, max(TRY_CAST(decided_on AS DATE)) AS last_decision_on
    FROM decisions GROUP BY workspace
)
SELECT w.workspace, w.source_file, w.archive, d.last_decision_on,
       coalesce(TRY_CAST(regexp_extract(w.ttl, '^\s*(\d+)\s*d', 1) AS INTEGER), {{ vocabulary.WORKSPACE_TTL_DEFAULT_DAYS }}) AS ttl_days,
       r.retention_days,  -- SPEC §5: workspace_retention (spec/vocabulary.py)
       d.last_decision_on + coalesce(TRY_CAST(regexp_extract(w.ttl, '^\s*(\d+)\s*d', 1)
           AS INTEGER), {{ vocabulary.WORKSPACE_TTL_DEFAULT_DAYS }}) AS expired_on,
       k.as_of
FROM workspaces w JOIN last_decision d USING (workspace)
    LEFT JOIN workspace_retention r ON r.archive = w.archive, brain_clock k
WHERE d.last_decision_on IS NOT NULL AND k.as_of IS NOT NULL;
