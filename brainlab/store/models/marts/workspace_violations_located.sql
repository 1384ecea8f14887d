-- SPEC §5 structure rules, from workspace_violations.
CREATE OR REPLACE VIEW workspace_violations_located AS
SELECT v.*, coalesce(
           (SELECT any_value(f.source_file) FROM workspace_files f
            WHERE f.workspace = v.workspace AND f.file_name = v.file_name),
           (SELECT any_value(regexp_replace(f.source_file, '/[^/]+$', '') || '/' || v.file_name)
            FROM workspace_files f WHERE f.workspace = v.workspace)) AS file
FROM workspace_violations v;
