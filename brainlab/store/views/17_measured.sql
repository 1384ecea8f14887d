-- Logged versus measured (issue 13): the metabolism a transcript measures (SPEC §3.1, §3.2,
-- §7 mapping), each metabolism log matched to its transcript, and the basis every metabolism
-- metric chooses (logged | measured | best). The audit itself is views/23_audit.sql.

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
-- The sessions one refresh of cc_session_measures recomputes (brainlab/store/measured.py sets
-- the variable cc_measure_sessions for that statement; unset, every session is in scope).
-- The raw rows are cut to those sessions before each window, every window's partitions kept
-- whole, so an incremental run costs what it touched, not the whole store.
CREATE OR REPLACE MACRO cc_in_measure_scope(session) AS
    getvariable('cc_measure_sessions') IS NULL
    OR list_contains(getvariable('cc_measure_sessions'), session);

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

-- Each metabolism log matched to its transcript (issue 13 §2). Candidates: transcripts that
-- start within `tolerance_min` of the log's start, or whose file paths name the log's sess_id
-- (the scribe writing progression/metabolism/<date>-<sess_id>.md or claims/<sess_id>.yml).
-- Evidence score: sess_id named in a path 4, same project 2, start within 5 min 1. The one
-- best-scored candidate is `matched`; a tie at the top is `ambiguous` (candidates listed);
-- no candidate is `unmatched`. Never silent: one row per log.
CREATE OR REPLACE MACRO session_matches_for(tolerance_min := 30) AS TABLE
WITH logs AS (
    SELECT sess_id, started_at, project FROM stg_metabolism_sessions
), named AS (
    SELECT DISTINCT transcript_session, unnest(named_sess_ids) AS sess_id
    FROM cc_session_measures
), pairs AS (
    SELECT l.sess_id, c.transcript_session
    FROM logs l JOIN cc_session_measures c
      ON c.started_at >= l.started_at - to_minutes(CAST(tolerance_min AS BIGINT))
     AND c.started_at <= l.started_at + to_minutes(CAST(tolerance_min AS BIGINT))
    UNION
    SELECT n.sess_id, n.transcript_session FROM named n JOIN logs l USING (sess_id)
), scored AS (
    SELECT p.sess_id, p.transcript_session,
           round(date_diff('second', l.started_at, c.started_at) / 60.0, 1) AS delta_min,
           n.sess_id IS NOT NULL AS is_named,
           coalesce(l.project = c.project, false) AS is_same_project
    FROM pairs p
    JOIN logs l USING (sess_id)
    JOIN cc_session_measures c USING (transcript_session)
    LEFT JOIN named n ON n.sess_id = p.sess_id AND n.transcript_session = p.transcript_session
), ranked AS (
    SELECT *,
        4 * is_named::INT + 2 * is_same_project::INT
            + (abs(coalesce(delta_min, 1e9)) <= 5)::INT AS score
    FROM scored
), top AS (
    SELECT *, count(*) OVER (PARTITION BY sess_id, score) AS n_at_score,
           max(score) OVER (PARTITION BY sess_id) AS best_score
    FROM ranked
), summary AS (
    SELECT sess_id,
        count(*) FILTER (WHERE score = best_score) AS n_best,
        any_value(transcript_session) FILTER (WHERE score = best_score) AS best_transcript,
        any_value(delta_min) FILTER (WHERE score = best_score) AS best_delta,
        any_value(is_named) FILTER (WHERE score = best_score) AS best_named,
        any_value(is_same_project) FILTER (WHERE score = best_score) AS best_project,
        list(transcript_session || ' (Δt ' || coalesce(delta_min::VARCHAR, '?') || ' min, score '
             || score || ')' ORDER BY score DESC, abs(delta_min)) AS candidates
    FROM top GROUP BY sess_id
)
SELECT l.sess_id,
    CASE WHEN s.n_best = 1 THEN s.best_transcript END AS transcript_session,
    CASE WHEN s.sess_id IS NULL THEN 'unmatched'
         WHEN s.n_best = 1 THEN 'matched' ELSE 'ambiguous' END AS match_status,
    CASE WHEN s.sess_id IS NULL
            THEN 'no transcript starts within ' || tolerance_min
                 || ' min of the log and none names its sess_id'
         WHEN s.n_best = 1
            THEN concat_ws('; ', 'start Δt ' || s.best_delta || ' min',
                           CASE WHEN s.best_project THEN 'same project' END,
                           CASE WHEN s.best_named THEN 'sess_id named in a file path' END)
         ELSE s.n_best || ' candidates with equal evidence' END AS evidence,
    CASE WHEN s.n_best = 1 THEN s.best_delta END AS delta_min,
    coalesce(s.candidates, []) AS candidates
FROM logs l
LEFT JOIN summary s USING (sess_id);

CREATE OR REPLACE VIEW session_matches AS SELECT * FROM session_matches_for();

-- measured_sessions: cc_measured (as stored in cc_session_measures by the last claude
-- ingest, brainlab.store.measured) with the matched log's sess_id (when two logs claim one
-- transcript, the one starting closest) and how each field was derived.
CREATE OR REPLACE VIEW measured_sessions AS
WITH claimed AS (
    SELECT transcript_session, sess_id FROM session_matches
    WHERE match_status = 'matched'
    QUALIFY row_number() OVER (PARTITION BY transcript_session
                               ORDER BY abs(delta_min), sess_id) = 1
)
SELECT m.transcript_session, c.sess_id, m.type, m.mode, m.started_at, m.duration_min,
       m.tokens_used, m.context_peak_pct, m.context_at_close, m.commits, m.todos_closed,
       m.kernel_files_touched, m.adrs_written, m.insights_captured, m.agents_loaded,
       m.project, m.todos_created, m.decisions_logged,
       'type: ' || m.type_derivation
       || '; mode: ' || CASE WHEN m.mode IS NULL THEN 'no +keyword in the first message'
                             ELSE '+' || m.mode || ' in the first message' END
       || '; started_at, duration_min: first to last main-chain line'
       || '; tokens_used: context size of the last main-chain request (SPEC §7)'
       || '; context_peak_pct, context_at_close: main-chain context / '
       || m.context_window_tokens || ' window'
       || '; commits: Bash calls running git commit'
       || '; todos_closed: to-do items marked completed'
       || '; kernel_files_touched: files changed under agents/, profil/, KERNEL.md, brain-compose.yml'
       || '; adrs_written: ADR files created by Write'
       || '; insights_captured: to-dos created + workspace log.md decision lines'
       || '; agents_loaded: agents/*.md read + subagents launched' AS derivation,
       m.source_file
FROM cc_session_measures m
LEFT JOIN claimed c USING (transcript_session);

-- The sessions every metabolism metric reads, on one basis (issue 13 §4, DESIGN "measured
-- beside logged"): 'logged' = the logs; 'measured' = the transcripts (a matched log lends
-- only what a transcript cannot know: handoff, cold-start KPI, logged health); 'best'
-- (default) = measured where a transcript exists (the log's value where the transcript's is
-- missing), else logged; a transcript with no log counts on 'best' only when it declares a
-- brain session type (SPEC §2.7 keyword or §2.3 boot context): any other Claude Code session
-- is not a protocol session (it stays on 'measured' and in `sessions`).
-- `basis_used` says which side each row's measures came from.
CREATE OR REPLACE MACRO basis_sessions(basis := 'best') AS TABLE
WITH both_sides AS (
    SELECT l.sess_id AS log_id, m.transcript_session,
           coalesce(l.sess_id, m.sess_id, m.transcript_session) AS key,
           l.started_at AS l_started_at, m.started_at AS m_started_at,
           l.type AS l_type, nullif(m.type, 'unknown') AS m_type,
           l.mode AS l_mode, m.mode AS m_mode, l.project AS l_project, m.project AS m_project,
           l.tokens_used AS l_tokens, m.tokens_used AS m_tokens,
           l.context_peak_pct AS l_peak, m.context_peak_pct AS m_peak,
           l.context_at_close AS l_close, m.context_at_close AS m_close,
           l.duration_min AS l_duration, m.duration_min AS m_duration,
           l.commits AS l_commits, m.commits AS m_commits,
           l.todos_closed AS l_todos, m.todos_closed AS m_todos,
           l.kernel_files_touched AS l_kernel, m.kernel_files_touched AS m_kernel,
           l.adrs_written AS l_adrs, m.adrs_written AS m_adrs,
           l.insights_captured AS l_insights, m.insights_captured AS m_insights,
           l.handoff_level, l.cold_start_kpi_pass, l.health_score_logged,
           l.saturation_flag_logged, l.log_version, l.is_incomplete, l.notes,
           l.signals_logged, l.source_file AS l_file, m.source_file AS m_file
    FROM stg_metabolism_sessions l
    -- the constant filter lets DuckDB skip the transcripts on the logged basis
    FULL OUTER JOIN (SELECT * FROM measured_sessions WHERE basis <> 'logged') m
      ON m.sess_id = l.sess_id
), picked AS (
    SELECT *,
        CASE basis WHEN 'logged' THEN 'logged' WHEN 'measured' THEN 'measured'
             ELSE CASE WHEN transcript_session IS NOT NULL THEN 'measured' ELSE 'logged' END
        END AS side
    FROM both_sides
    WHERE CASE basis WHEN 'logged' THEN log_id IS NOT NULL
                     WHEN 'measured' THEN transcript_session IS NOT NULL
                     ELSE log_id IS NOT NULL OR m_type IS NOT NULL END
), chosen AS (
    SELECT key AS sess_id, side, transcript_session,
        CASE side WHEN 'logged' THEN l_started_at ELSE coalesce(m_started_at, l_started_at) END
            AS started_at,
        CASE side WHEN 'logged' THEN l_type ELSE coalesce(m_type,
            CASE WHEN basis = 'best' THEN l_type END, 'unknown') END AS type,
        CASE side WHEN 'logged' THEN l_mode
             ELSE coalesce(m_mode, CASE WHEN basis = 'best' THEN l_mode END) END AS mode,
        CASE side WHEN 'logged' THEN l_project ELSE coalesce(l_project, m_project) END AS project,
        CASE side WHEN 'logged' THEN l_tokens ELSE coalesce(m_tokens, l_tokens) END AS tokens_used,
        CASE side WHEN 'logged' THEN l_peak ELSE coalesce(m_peak, l_peak) END AS context_peak_pct,
        CASE side WHEN 'logged' THEN l_close ELSE coalesce(m_close, l_close) END AS context_at_close,
        CASE side WHEN 'logged' THEN l_duration ELSE coalesce(m_duration, l_duration) END
            AS duration_min,
        CASE side WHEN 'logged' THEN l_commits ELSE coalesce(m_commits, l_commits) END AS commits,
        CASE side WHEN 'logged' THEN l_todos ELSE coalesce(m_todos, l_todos) END AS todos_closed,
        CASE side WHEN 'logged' THEN l_kernel ELSE coalesce(m_kernel, l_kernel) END
            AS kernel_files_touched,
        CASE side WHEN 'logged' THEN l_adrs ELSE coalesce(m_adrs, l_adrs) END AS adrs_written,
        CASE side WHEN 'logged' THEN l_insights ELSE coalesce(m_insights, l_insights) END
            AS insights_captured,
        handoff_level, cold_start_kpi_pass, health_score_logged, saturation_flag_logged,
        log_version, is_incomplete, notes, signals_logged,
        CASE side WHEN 'logged' THEN l_file ELSE coalesce(m_file, l_file) END AS source_file
    FROM picked
)
SELECT sess_id, started_at, CAST(started_at AS DATE) AS session_date, chosen.type,
       CASE WHEN chosen.type IS NULL THEN 'unknown' ELSE coalesce(c.category, 'unknown') END
           AS category,
       mode, project, CAST(tokens_used AS BIGINT) AS tokens_used, context_peak_pct,
       context_at_close, duration_min, CAST(commits AS INTEGER) AS commits,
       CAST(todos_closed AS INTEGER) AS todos_closed,
       CAST(kernel_files_touched AS INTEGER) AS kernel_files_touched,
       CAST(adrs_written AS INTEGER) AS adrs_written,
       CAST(insights_captured AS INTEGER) AS insights_captured, handoff_level,
       cold_start_kpi_pass, health_score_logged, saturation_flag_logged, log_version,
       is_incomplete, notes, signals_logged, side AS basis_used, transcript_session, source_file
FROM chosen
LEFT JOIN session_categories c ON c.type = chosen.type;
