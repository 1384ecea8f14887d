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
