-- SPEC §5 workspace rules, one row per violation.
CREATE OR REPLACE VIEW workspace_violations AS
SELECT workspace, 'readme-too-long' AS rule, 'README.md' AS file_name, NULL::INTEGER AS line,
    'README.md has ' || readme_lines || ' lines (max 10)' AS detail
FROM workspaces WHERE readme_lines > 10
UNION ALL
SELECT workspace, 'ram-too-long', file_name, NULL,
    'ram.md has ' || active_lines || ' active lines (max 50)'
FROM workspace_files WHERE file_name = 'ram.md' AND active_lines > 50
UNION ALL
SELECT workspace, 'malformed-log-line', 'log.md', line,
    'not "<date time> | <question> | choisi : <choice> | raison : <reason>": ' || raw_line
FROM decisions WHERE NOT is_well_formed
UNION ALL
SELECT workspace, 'file-not-allowed', file_name, NULL,
    file_name || ' is not one of README.md, ram.md, log.md, feedback.md'
FROM workspace_files
WHERE file_name NOT IN ('README.md', 'ram.md', 'log.md', 'feedback.md')
UNION ALL
SELECT workspace, 'unknown-archive', 'README.md', NULL,
    CASE WHEN archive IS NULL THEN 'no archive value under ## Lifecycle'
         ELSE 'archive: ' || archive || ' (expected auto, keep, 30d, 90d or permanent)' END
FROM workspaces
WHERE archive IS NULL OR archive NOT IN ('auto', 'keep', '30d', '90d', 'permanent')
UNION ALL
SELECT DISTINCT f.workspace, 'missing-readme', 'README.md', NULL, 'workspace has no README.md'
FROM workspace_files f
WHERE NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.workspace = f.workspace);
