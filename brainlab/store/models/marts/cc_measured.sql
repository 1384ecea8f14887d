-- One row per transcript session: every log field the transcript can give (SPEC §7 mapping).
-- type: `brain <type>` / `+mode` in the first human prompt (SPEC §2.7), else the first
-- contexts/session-<type>.yml read by the main chain (SPEC §2.3 boot), else 'unknown'.
-- todos_closed: main-chain to-do items ever marked completed (TodoWrite items, TaskUpdate
-- tasks; a subagent's own planning list is not the session's to-do list).
-- kernel_files_touched (SPEC §3.2): distinct files changed (Edit/Write/MultiEdit/NotebookEdit)
-- under agents/ or profil/, or named KERNEL.md or brain-compose.yml.
-- adrs_written: distinct ADR files (ADR-<n>*.md, adr/ adrs/ decisions/ *.md) whose first
-- touch in the session is a Write (created, not edited).
-- insights_captured (SPEC §3.2): to-dos created + decision lines added to a workspace log.md.
CREATE OR REPLACE VIEW cc_measured AS
WITH spans AS (SELECT * FROM cc_session_spans), main AS (  -- SPEC §7 deduplication of main-chain calls, within the session (no pricing)
    SELECT session_id, max(context_tokens) AS peak_tokens,
           arg_max(context_tokens, ts) AS close_tokens, count(*) AS main_requests
    FROM (SELECT session_id, ts,
                 input_tokens + cache_creation_tokens + cache_read_tokens AS context_tokens
          FROM cc_request_lines WHERE agent_id IS NULL AND cc_in_measure_scope(session_id)
          QUALIFY row_number() OVER (
              PARTITION BY session_id, coalesce(message_id, source_file || ':' || line),
                           request_id
              ORDER BY ts DESC NULLS LAST, source_file DESC, line DESC) = 1)
    GROUP BY session_id
), calls AS MATERIALIZED (  -- each tool call once (as cc_tool_calls, without its joins)
    SELECT session_id, agent_id, ts, tool, file_path, is_git_commit, source_file, line
    FROM cc_tool_call_lines
    WHERE getvariable('cc_measure_sessions') IS NULL
       OR (tool_use_id IS NULL AND cc_in_measure_scope(session_id))
       OR tool_use_id IN (SELECT tool_use_id FROM cc_tool_call_lines
                          WHERE cc_in_measure_scope(session_id))
    QUALIFY tool_use_id IS NULL OR row_number() OVER (
        PARTITION BY tool_use_id ORDER BY ts NULLS LAST, source_file, line) = 1
), prompts AS (
    SELECT session_id, keyword_type, keyword_mode, keyword_rule
    FROM cc_marks WHERE kind = 'prompt' AND cc_in_measure_scope(session_id)
    QUALIFY row_number() OVER (PARTITION BY session_id
                               ORDER BY ts NULLS LAST, source_file, line) = 1
), boot AS (
    SELECT session_id,
           regexp_extract(file_path, 'contexts[/\\]session-([A-Za-z-]+)\.ya?ml$', 1) AS boot_type
    FROM calls
    WHERE agent_id IS NULL AND tool = 'Read'
      AND regexp_matches(file_path, 'contexts[/\\]session-[A-Za-z-]+\.ya?ml$')
    QUALIFY row_number() OVER (PARTITION BY session_id
                               ORDER BY ts NULLS LAST, source_file, line) = 1
), todos AS (
    SELECT session_id,
           count(DISTINCT item_key) FILTER (WHERE item_status = 'completed') AS todos_closed,
           count(DISTINCT item_key) FILTER (WHERE NOT starts_with(item_key, 'task:'))
               AS todos_created
    FROM cc_marks WHERE kind = 'todo' AND agent_id IS NULL  -- the session's own list
    GROUP BY session_id
), decisions AS (
    SELECT session_id, sum(lines) AS decisions_logged
    FROM (SELECT session_id, lines FROM cc_marks WHERE kind = 'decisions'
          QUALIFY tool_use_id IS NULL OR row_number() OVER (
              PARTITION BY tool_use_id ORDER BY source_file, line) = 1)
    GROUP BY session_id
), touched AS (
    SELECT session_id, file_path, tool,
           row_number() OVER (PARTITION BY session_id, file_path
                              ORDER BY ts NULLS LAST, source_file, line) AS nth
    FROM calls
    WHERE file_path IS NOT NULL
      AND tool IN ('Read', 'Edit', 'Write', 'MultiEdit', 'NotebookEdit')
), files AS (
    SELECT session_id,
        count(DISTINCT file_path) FILTER (
            WHERE tool IN ('Edit', 'Write', 'MultiEdit', 'NotebookEdit')
              AND regexp_matches(file_path,
                  '(^|[/\\])(agents|profil)[/\\]|(^|[/\\])(KERNEL\.md|brain-compose\.ya?ml)$'))
            AS kernel_files_touched,
        count(DISTINCT file_path) FILTER (
            WHERE nth = 1 AND tool = 'Write'
              AND regexp_matches(file_path,
                  '(?i)(^|[/\\])(adr-?[0-9]+[^/\\]*|(adrs?|decisions)[/\\][^/\\]+)\.md$'))
            AS adrs_written
    FROM touched GROUP BY session_id
), commits AS (
    SELECT session_id, count(*) FILTER (WHERE is_git_commit) AS commits
    FROM calls GROUP BY session_id
), named AS (  -- session ids the session names in file paths (its log, its claim)
    SELECT session_id, list(DISTINCT regexp_extract(
               file_path, '(sess-[0-9]{8}-[0-9]{4}-[^/\\]+?)\.(md|ya?ml)$', 1)) AS named_sess_ids
    FROM calls
    WHERE file_path LIKE '%sess-%'
      AND regexp_matches(file_path, 'sess-[0-9]{8}-[0-9]{4}-[^/\\]+\.(md|ya?ml)$')
    GROUP BY session_id
), agents AS (  -- SPEC §7: agents/*.md read, and subagents launched
    SELECT session_id, list(DISTINCT agent ORDER BY agent) AS agents_loaded
    FROM (SELECT session_id, regexp_extract(file_path, 'agents/([^/]+)\.md$', 1) AS agent
          FROM calls
          WHERE tool = 'Read' AND regexp_matches(file_path, '(^|/)agents/[^/]+\.md$')
          UNION ALL
          SELECT session_id, subagent_type FROM cc_agents)
    WHERE agent IS NOT NULL AND agent <> ''
    GROUP BY session_id
)
SELECT s.session_id AS transcript_session,
       coalesce(s.main_started_at, s.started_at) AS started_at,
       coalesce(s.main_ended_at, s.ended_at) AS ended_at,
       round(date_diff('second', coalesce(s.main_started_at, s.started_at),
                       coalesce(s.main_ended_at, s.ended_at)) / 60.0, 1) AS duration_min,
       s.cwd, sp.project,
       lower(coalesce(p.keyword_type, b.boot_type, 'unknown')) AS type,
       p.keyword_mode AS mode,
       CASE WHEN p.keyword_type IS NOT NULL THEN 'first message (' || p.keyword_rule || ')'
            WHEN b.boot_type IS NOT NULL
                THEN 'boot context read (contexts/session-' || b.boot_type || '.yml)'
            WHEN p.session_id IS NULL THEN 'unknown: no human prompt in the transcript'
            ELSE 'unknown: first message ' || p.keyword_rule
                 || ' and no contexts/session-*.yml read' END AS type_derivation,
       m.close_tokens AS tokens_used,
       round(100.0 * m.peak_tokens / w.window_tokens, 1) AS context_peak_pct,
       round(100.0 * m.close_tokens / w.window_tokens, 1) AS context_at_close,
       w.window_tokens AS context_window_tokens,
       coalesce(c.commits, 0) AS commits,
       coalesce(t.todos_closed, 0) AS todos_closed,
       coalesce(t.todos_created, 0) AS todos_created,
       CAST(coalesce(d.decisions_logged, 0) AS BIGINT) AS decisions_logged,
       coalesce(f.kernel_files_touched, 0) AS kernel_files_touched,
       coalesce(f.adrs_written, 0) AS adrs_written,
       CAST(coalesce(t.todos_created, 0) + coalesce(d.decisions_logged, 0) AS BIGINT)
           AS insights_captured,
       coalesce(a.agents_loaded, []) AS agents_loaded,
       coalesce(nm.named_sess_ids, []) AS named_sess_ids,
       coalesce(m.main_requests, 0) AS main_requests, s.main_file AS source_file
FROM spans s
LEFT JOIN main m USING (session_id)
CROSS JOIN LATERAL (SELECT CASE WHEN m.peak_tokens > 200000 THEN 1000000 ELSE 200000 END
                        AS window_tokens) w
LEFT JOIN prompts p USING (session_id)
LEFT JOIN boot b USING (session_id)
LEFT JOIN todos t USING (session_id)
LEFT JOIN decisions d USING (session_id)
LEFT JOIN files f USING (session_id)
LEFT JOIN commits c USING (session_id)
LEFT JOIN agents a USING (session_id)
LEFT JOIN named nm USING (session_id)
LEFT JOIN cc_session_projects sp USING (session_id);
