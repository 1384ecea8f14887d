-- Protocol compliance from transcripts (issue 14): boot layers (SPEC §2.3), close sequence
-- (SPEC §2.4) and workspace read rights by role (SPEC §5). Each rule_* view returns the same
-- columns as views/80_rules.sql and filters rule_rows_boot_close (at the end), which computes
-- them together; `violations` reads that once (generated, store/schema.py). They judge brain
-- sessions only (brain_transcript_sessions): a transcript is not held to the protocol unless
-- it declared `brain <type>` or a metabolism log or claim is matched to it.

-- Brain sessions among the transcripts, with the type each is judged by: the type its first
-- prompt declares (SPEC §2.7; or the contexts/session-<type>.yml it read, cc_measured), else
-- its matched claim's type, else its matched log's. A transcript is matched to a metabolism
-- log (session_matches), else to a claim whose sess_id it names in a file path (it wrote
-- claims/<sess_id>.yml). subject = that sess_id, else the transcript's sessionId.
CREATE OR REPLACE VIEW brain_transcript_sessions AS
WITH claim_type AS (
    SELECT sess_id, arg_max(type, coalesce(closed_at, opened_at)) AS type
    FROM claims WHERE type IS NOT NULL GROUP BY sess_id
), log_type AS (
    SELECT sess_id, any_value(type) AS type FROM raw_metabolism_logs
    WHERE type IS NOT NULL GROUP BY sess_id
), claimed AS (  -- the claim a transcript names, when no log is matched to it
    SELECT x.transcript_session, min(c.sess_id) AS sess_id
    FROM cc_session_measures x, unnest(x.named_sess_ids) AS n(sess_id)
    JOIN (SELECT DISTINCT sess_id FROM claims) c ON c.sess_id = n.sess_id
    GROUP BY x.transcript_session
), matched AS (
    SELECT m.*, coalesce(m.sess_id, k.sess_id) AS brain_sess_id FROM measured_sessions m
    LEFT JOIN claimed k USING (transcript_session)
)
SELECT m.transcript_session AS session_id, m.brain_sess_id AS sess_id,
       coalesce(m.brain_sess_id, m.transcript_session) AS subject,
       lower(trim(coalesce(nullif(m.type, 'unknown'), c.type, l.type))) AS type,
       CASE WHEN m.type <> 'unknown' THEN 'transcript'
            WHEN c.type IS NOT NULL THEN 'claim' ELSE 'metabolism log' END AS type_source,
       m.started_at, coalesce(x.context_window_tokens, 200000) AS context_window_tokens,
       coalesce(x.todos_created, 0) AS todos_created, m.source_file
FROM matched m
LEFT JOIN cc_session_measures x ON x.transcript_session = m.transcript_session
LEFT JOIN claim_type c ON c.sess_id = m.brain_sess_id
LEFT JOIN log_type l ON l.sess_id = m.brain_sess_id
WHERE m.type <> 'unknown' OR m.brain_sess_id IS NOT NULL;

-- The main-chain tool calls of brain sessions, in order, classified by protocol_calls
-- (views/79_protocol_calls.sql: productive, claim close, close agent).
CREATE OR REPLACE VIEW brain_session_calls AS
SELECT b.session_id, b.subject, b.type, t.ts, t.tool, t.file_path, t.launched_subagent_type,
       t.source_file, t.line,
       row_number() OVER (PARTITION BY t.session_id
                          ORDER BY t.ts NULLS LAST, t.source_file, t.line) AS seq,
       t.is_productive, t.is_claim_close, t.agent
FROM protocol_calls t JOIN brain_transcript_sessions b USING (session_id);

-- Per brain session with a main-chain tool call: where boot ends (the first productive
-- action) and where the close starts: after the last close-trigger prompt ('fin',
-- 'on wrappe'..., seeds/session-orchestrator.md.txt:291), else after the last productive
-- action, else the whole session (boot reads of files its context lists excepted, see
-- close_sequence_calls).
CREATE OR REPLACE VIEW brain_session_phases AS
WITH triggers AS (
    SELECT session_id, max(ts) AS close_trigger_at FROM cc_marks
    WHERE kind = 'prompt' AND item_key = 'close-trigger' AND agent_id IS NULL
    GROUP BY session_id
), phases AS (
    SELECT session_id, any_value(subject) AS subject, any_value(type) AS type,
           arg_min(source_file, seq) AS source_file,
           min(ts) FILTER (WHERE is_productive) AS first_productive_at,
           max(ts) FILTER (WHERE is_productive) AS last_productive_at,
           arg_min(source_file, seq) FILTER (WHERE is_productive) AS first_productive_file,
           arg_min(line, seq) FILTER (WHERE is_productive) AS first_productive_line,
           arg_min(tool, seq) FILTER (WHERE is_productive) AS first_productive_tool
    FROM brain_session_calls GROUP BY session_id
)
SELECT p.session_id, p.subject, p.type, p.source_file, p.first_productive_at,
       p.first_productive_file, p.first_productive_line, p.first_productive_tool,
       p.last_productive_at, g.close_trigger_at,
       coalesce(g.close_trigger_at, p.last_productive_at) AS close_from
FROM phases p LEFT JOIN triggers g USING (session_id);

-- Main-chain Reads at boot: before the first productive action (the whole session when it
-- has none).
CREATE OR REPLACE VIEW brain_boot_reads AS
SELECT c.session_id, c.subject, c.type, c.ts, c.file_path, c.source_file, c.line
FROM brain_session_calls c JOIN brain_session_phases p USING (session_id)
WHERE c.tool = 'Read' AND c.file_path IS NOT NULL
  AND (p.first_productive_at IS NULL OR c.ts < p.first_productive_at);

-- SPEC §2.3 boot context target: the context of the main-chain request that carries the
-- first productive action (the last one at or before it) against the type's
-- context_target.total_boot, plus `tolerance_pct` percentage points.
CREATE OR REPLACE MACRO rule_bot003_for(tolerance_pct := 5) AS TABLE
WITH boot AS (
    SELECT p.session_id, p.subject, p.type, p.first_productive_at, p.first_productive_file,
           p.first_productive_line, coalesce(m.context_window_tokens, 200000)
               AS context_window_tokens, x.target_boot_pct,
           (SELECT arg_max(r.input_tokens + r.cache_creation_tokens + r.cache_read_tokens,
                           r.ts)
            FROM cc_request_dedup r
            WHERE r.session_id = p.session_id AND r.agent_id IS NULL
              AND r.ts <= p.first_productive_at) AS boot_tokens
    FROM brain_session_phases p
    LEFT JOIN cc_session_measures m ON m.transcript_session = p.session_id
    JOIN (SELECT session_type, max(target_boot_pct) AS target_boot_pct FROM session_contexts
          GROUP BY session_type) x ON x.session_type = p.type
    WHERE p.first_productive_at IS NOT NULL AND x.target_boot_pct IS NOT NULL
)
SELECT 'session' AS subject_kind, subject, first_productive_at AS occurred_at,
       first_productive_file AS file, first_productive_line AS line,
       type || ' session booted at ' || round(100.0 * boot_tokens / context_window_tokens, 1)
           || '% of its context (target ~' || target_boot_pct || '%, tolerance '
           || tolerance_pct || ' points)' AS message,
       json_object('boot_tokens', boot_tokens,
                   'boot_pct', round(100.0 * boot_tokens / context_window_tokens, 1),
                   'target_boot_pct', target_boot_pct,
                   'tolerance_pct', tolerance_pct)::VARCHAR AS evidence
FROM boot
WHERE 100.0 * boot_tokens / context_window_tokens > target_boot_pct + tolerance_pct;


-- SPEC §2.4 close steps in brain sessions: launches (Task/Agent) of the close agents, or
-- main-chain Reads of their agents/<name>.md, from the close's start (brain_session_phases);
-- when the session has no productive action and no trigger, a boot read of a file its
-- context lists (scribe is in brain's L1) is boot, not close.
CREATE OR REPLACE VIEW close_sequence_calls AS
SELECT c.session_id, c.subject, c.type, c.seq, c.ts, c.agent, c.tool, c.source_file, c.line
FROM brain_session_calls c JOIN brain_session_phases p USING (session_id)
WHERE c.agent IN ('metabolism-scribe', 'todo-scribe', 'scribe', 'coach')
  AND (p.close_from IS NULL OR c.ts > p.close_from)
  AND NOT (p.close_from IS NULL AND c.tool = 'Read' AND EXISTS (
      SELECT 1 FROM context_files f WHERE f.session_type = c.type
        AND ends_with(c.file_path, '/' || f.path)));

-- One row per brain session that ran a close (at least one close agent), its order and facts.
CREATE OR REPLACE VIEW close_sequences AS
WITH agents AS (
    SELECT session_id, any_value(subject) AS subject, any_value(type) AS type,
           list(agent ORDER BY seq) AS agents, arg_min(agent, seq) AS first_agent,
           max(ts) AS last_agent_at, arg_max(agent, seq) AS last_agent,
           arg_min(source_file, seq) AS file, arg_min(line, seq) AS line, min(ts) AS started_at
    FROM close_sequence_calls GROUP BY session_id
), claim AS (
    SELECT session_id, max(ts) AS claim_closed_at FROM brain_session_calls
    WHERE is_claim_close GROUP BY session_id
), significant AS (
    SELECT session_id,
           count(*) FILTER (WHERE tool = 'Bash' AND is_productive) AS commits,
           count(*) FILTER (WHERE tool = 'Write'
               AND regexp_matches(file_path, '(^|[/\\])agents[/\\][^/\\]+\.md$'))
               AS agents_written,
           count(*) FILTER (WHERE is_productive AND tool <> 'Bash'
               AND regexp_matches(file_path, '(^|[/\\-])specs?\.md$', 'i'))
               AS specs_changed
    FROM brain_session_calls GROUP BY session_id
)
SELECT a.*, c.claim_closed_at, coalesce(s.commits, 0) AS commits,
       coalesce(s.agents_written, 0) AS agents_written,
       coalesce(s.specs_changed, 0) AS specs_changed, coalesce(m.todos_created, 0) AS todos_created
FROM agents a
LEFT JOIN cc_session_measures m ON m.transcript_session = a.session_id
LEFT JOIN claim c USING (session_id)
LEFT JOIN significant s USING (session_id);

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

-- Every rule of this file in one relation (column `rule`), so the views they share are
-- computed once per query (MATERIALIZED), not once per rule: `violations` reads this view
-- once for all of them (catalogue `rows_view`); rule_<id> is its filter.
CREATE OR REPLACE VIEW rule_rows_boot_close AS
WITH phases AS MATERIALIZED (SELECT * FROM brain_session_phases),
boot AS MATERIALIZED (SELECT * FROM brain_boot_reads),
cs AS MATERIALIZED (SELECT * FROM close_sequences),
reads AS MATERIALIZED (SELECT * FROM workspace_reads),
r_bot001 AS (
    -- SPEC §2.3 layer 0 (always): each L0 file of the session type's context read at boot.
    WITH missing AS (
        SELECT p.session_id, p.subject, p.type, p.first_productive_at,
               coalesce(p.first_productive_file, p.source_file) AS file,
               p.first_productive_line AS line, list(f.path ORDER BY f.position) AS missing
        FROM phases p
        JOIN context_files f ON f.session_type = p.type AND f.layer = 'L0'
        WHERE NOT EXISTS (SELECT 1 FROM boot r
                          WHERE r.session_id = p.session_id
                            AND (r.file_path = f.path OR ends_with(r.file_path, '/' || f.path)))
        GROUP BY ALL
    )
    SELECT 'session' AS subject_kind, subject, first_productive_at AS occurred_at, file,
           line, type || ' session did not read ' || array_to_string(missing, ', ')
               || ' (layer 0) before its first productive action' AS message,
           json_object('type', type, 'missing', missing,
                       'first_productive_at', first_productive_at)::VARCHAR AS evidence
    FROM missing
),
r_bot002 AS (
    -- SPEC §2.3 layer 3 (projets/X + todo/X) only for work/deploy/debug, unless the type's
    -- own context lists the file (`{project}` matching any name).
    SELECT 'session' AS subject_kind, r.subject, min(r.ts) AS occurred_at,
           arg_min(r.source_file, r.ts) AS file, arg_min(r.line, r.ts) AS line,
           r.type || ' session read project files at boot: '
               || string_agg(DISTINCT regexp_extract(r.file_path,
                      '((projets|todo)[/\\][^/\\]+\.md)$', 1), ', ') AS message,
           json_object('type', r.type, 'files', list(DISTINCT regexp_extract(
               r.file_path, '((projets|todo)[/\\][^/\\]+\.md)$', 1)))::VARCHAR AS evidence
    FROM boot r
    WHERE r.type IS NOT NULL
      AND r.type NOT IN (SELECT type FROM session_type_sets WHERE set_name = 'project-layer')
      AND regexp_matches(r.file_path, '(^|[/\\])(projets|todo)[/\\][^/\\]+\.md$')
      AND NOT EXISTS (
          SELECT 1 FROM context_files f
          WHERE f.session_type = r.type AND f.path IS NOT NULL
            AND (r.file_path LIKE ('%/' || replace(f.path, '{project}', '%'))
                 OR r.file_path LIKE replace(f.path, '{project}', '%')))
    GROUP BY r.session_id, r.subject, r.type
),
r_clo003 AS (
    -- SPEC §2.4 step 1: metabolism-scribe always first.
    SELECT 'session' AS subject_kind, subject, started_at AS occurred_at, file, line,
           CASE WHEN list_contains(agents, 'metabolism-scribe')
                THEN first_agent || ' ran before the metabolism-scribe in the close'
                ELSE 'the close ran ' || array_to_string(list_distinct(agents), ', ')
                     || ' but never the metabolism-scribe' END AS message,
           json_object('type', type, 'close_agents', agents)::VARCHAR AS evidence
    FROM cs WHERE first_agent IS DISTINCT FROM 'metabolism-scribe'
),
r_clo004 AS (
    -- SPEC §2.4 step 2: todo-scribe for work/sprint/debug (and brainstorm with to-dos).
    SELECT 'session' AS subject_kind, subject, started_at AS occurred_at, file, line,
           type || ' session closed without the todo-scribe' AS message,
           json_object('type', type, 'close_agents', agents,
                       'todos_created', todos_created)::VARCHAR AS evidence
    FROM cs
    WHERE (type IN (SELECT type FROM session_type_sets WHERE set_name = 'todo-scribe')
           OR (type = 'brainstorm' AND todos_created > 0))
      AND NOT list_contains(agents, 'todo-scribe')
),
r_clo005 AS (
    -- SPEC §2.4 step 3: scribe when the session was significant.
    SELECT 'session' AS subject_kind, subject, started_at AS occurred_at, file, line,
           'significant session (' || commits || ' commit(s), ' || agents_written
               || ' agent file(s) written, ' || specs_changed
               || ' spec(s) changed) closed without the scribe' AS message,
           json_object('commits', commits, 'agents_written', agents_written,
                       'specs_changed', specs_changed, 'close_agents', agents)::VARCHAR
               AS evidence
    FROM cs
    WHERE commits + agents_written + specs_changed > 0 AND NOT list_contains(agents, 'scribe')
),
r_clo006 AS (
    -- SPEC §2.4 step 4: the coach's report for brain/work/sprint/debug/coach (blocking).
    SELECT 'session' AS subject_kind, subject, started_at AS occurred_at, file, line,
           type || ' session closed without the coach''s report' AS message,
           json_object('type', type, 'close_agents', agents)::VARCHAR AS evidence
    FROM cs
    WHERE type IN (SELECT type FROM session_type_sets WHERE set_name = 'coach')
      AND NOT list_contains(agents, 'coach')
),
r_clo007 AS (
    -- SPEC §2.4 step 5: the BSI claim close comes after every close agent.
    SELECT 'session' AS subject_kind, subject, last_agent_at AS occurred_at, file, line,
           CASE WHEN claim_closed_at IS NULL
                THEN 'the close never closed the BSI claim'
                ELSE last_agent || ' ran after the BSI claim close' END AS message,
           json_object('last_agent', last_agent, 'last_agent_at', last_agent_at,
                       'claim_closed_at', claim_closed_at)::VARCHAR AS evidence
    FROM cs
    WHERE claim_closed_at IS NULL OR claim_closed_at < last_agent_at
),
r_wsp010 AS (
    -- SPEC §5 read rights: the coach-scribe has no right to ram.md.
    SELECT 'workspace' AS subject_kind, r.workspace AS subject, r.ts AS occurred_at,
           r.source_file AS file, r.line,
           'coach-scribe read ' || r.workspace || '/ram.md (its rights: log.md, feedback.md)'
               AS message,
           json_object('reader', r.reader, 'ts', r.ts, 'session', r.session_subject)::VARCHAR
               AS evidence
    FROM reads r
    WHERE r.reader = 'coach-scribe' AND r.section = 'ram'
      AND r.workspace IN (SELECT workspace FROM workspaces)
),
r_wsp011 AS (
    -- The coach-scribe reads feedback.md after the TTL (during the sprint: WSP009).
    SELECT 'workspace' AS subject_kind, r.workspace AS subject, r.ts AS occurred_at,
           r.source_file AS file, r.line,
           'coach-scribe read ' || r.workspace || '/feedback.md on ' || CAST(r.ts AS DATE)
               || ', before its TTL expired on ' || l.expired_on AS message,
           json_object('reader', r.reader, 'ts', r.ts, 'last_decision_on', l.last_decision_on,
                       'expired_on', l.expired_on)::VARCHAR AS evidence
    FROM reads r JOIN workspace_lifecycle l USING (workspace)
    WHERE r.reader = 'coach-scribe' AND r.section = 'feedback'
      AND CAST(r.ts AS DATE) > l.last_decision_on AND CAST(r.ts AS DATE) < l.expired_on
)
SELECT 'BOT001' AS rule, * FROM r_bot001
UNION ALL SELECT 'BOT002' AS rule, * FROM r_bot002
UNION ALL SELECT 'BOT003' AS rule, * FROM rule_bot003_for()
UNION ALL SELECT 'CLO003' AS rule, * FROM r_clo003
UNION ALL SELECT 'CLO004' AS rule, * FROM r_clo004
UNION ALL SELECT 'CLO005' AS rule, * FROM r_clo005
UNION ALL SELECT 'CLO006' AS rule, * FROM r_clo006
UNION ALL SELECT 'CLO007' AS rule, * FROM r_clo007
UNION ALL SELECT 'WSP010' AS rule, * FROM r_wsp010
UNION ALL SELECT 'WSP011' AS rule, * FROM r_wsp011;

-- Each rule's view rule_<id> is a filter of rule_rows_boot_close, generated from the
-- catalogue (rows_view) with `violations` (brainlab/store/schema.py).
