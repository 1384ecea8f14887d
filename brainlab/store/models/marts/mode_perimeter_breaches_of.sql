-- ADR-019:73 soft lock: work outside the declared mode's perimeter (mode_perimeters) carried
-- out anyway, by the main chain or a subagent; one row per session and kind of action.
-- A macro over `transcripts`, a relation shaped like brain_transcripts (default that view), so
-- rule_rows_modes evaluates brain_transcripts once for every mode rule; the view
-- mode_perimeter_breaches is this macro over brain_transcripts.
CREATE OR REPLACE MACRO mode_perimeter_breaches_of(transcripts := 'brain_transcripts') AS TABLE
WITH actions AS (
    SELECT t.session_id, t.ts, t.tool, t.source_file, t.line,
           replace(t.file_path, '\', '/') AS path,
           CASE WHEN t.is_git_commit THEN 'commit' ELSE 'write' END AS action
    FROM cc_tool_calls t
    WHERE t.is_git_commit
       OR (t.tool IN ('Edit', 'Write', 'MultiEdit', 'NotebookEdit') AND t.file_path IS NOT NULL)
)
SELECT b.session_id, b.declared_mode AS mode, a.action, a.ts, a.tool, a.path, a.source_file,
       a.line, p.source AS perimeter_source
FROM query_table(transcripts) b
JOIN mode_perimeters p ON p.mode = b.declared_mode
JOIN actions a ON a.session_id = b.session_id AND a.action = p.action
WHERE (p.refused IS NULL OR regexp_matches(coalesce(a.path, ''), p.refused))
  AND NOT (p.allowed IS NOT NULL AND regexp_matches(coalesce(a.path, ''), p.allowed));
