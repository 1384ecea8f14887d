-- SPEC §5 read rights (seeds/workspace-spec.md.txt:64-67): Reads of a brain workspace's
-- ram.md, log.md or feedback.md by brain sessions, with the reader's role: the subagent's
-- type, else 'main' (the session itself).
CREATE OR REPLACE VIEW workspace_reads AS
SELECT t.session_id, b.subject AS session_subject, t.ts,
       coalesce(lower(t.subagent_type), 'main') AS reader,
       regexp_extract(t.file_path, '(^|[/\\])workspace[/\\]([^/\\]+)[/\\](ram|log|feedback)\.md$',
                      2) AS workspace,
       regexp_extract(t.file_path, '(^|[/\\])workspace[/\\]([^/\\]+)[/\\](ram|log|feedback)\.md$',
                      3) AS section,
       t.source_file, t.line
FROM cc_tool_calls t JOIN brain_transcript_sessions b USING (session_id)
WHERE t.tool = 'Read'
  AND regexp_matches(t.file_path, '(^|[/\\])workspace[/\\][^/\\]+[/\\](ram|log|feedback)\.md$');
