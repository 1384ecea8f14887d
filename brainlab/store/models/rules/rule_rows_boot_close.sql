-- Every rule of this file in one relation (column `rule`), so what they share is computed
-- once per query, not once per rule: `violations` reads this view once for all of them
-- (catalogue `rows_view`); rule_<id> is its filter. brain_session_calls, which every
-- boot and close rule reads, is one MATERIALIZED CTE (`calls`) handed to the macros the
-- views brain_session_phases, brain_boot_reads, close_sequences and rule_bot003_for are
-- made of: read through those views it was planned and run 8 times (docs/compliance.md).
CREATE OR REPLACE VIEW rule_rows_boot_close AS
WITH calls AS MATERIALIZED (SELECT * FROM brain_session_calls),
phases AS MATERIALIZED (SELECT * FROM brain_session_phases_of(calls := calls)),
boot AS MATERIALIZED (SELECT * FROM brain_boot_reads_of(calls := calls)),
cs AS MATERIALIZED (SELECT * FROM close_sequences_of(calls := calls)),
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
                      '((projets|todo)[/\\][^/\\]+\.md)$', 1), ', '
                      ORDER BY regexp_extract(r.file_path,
                      '((projets|todo)[/\\][^/\\]+\.md)$', 1)) AS message,
           json_object('type', r.type, 'files', list(DISTINCT regexp_extract(
               r.file_path, '((projets|todo)[/\\][^/\\]+\.md)$', 1) ORDER BY regexp_extract(
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
UNION ALL SELECT 'BOT003' AS rule, * FROM rule_bot003_for(calls := calls)
UNION ALL SELECT 'CLO003' AS rule, * FROM r_clo003
UNION ALL SELECT 'CLO004' AS rule, * FROM r_clo004
UNION ALL SELECT 'CLO005' AS rule, * FROM r_clo005
UNION ALL SELECT 'CLO006' AS rule, * FROM r_clo006
UNION ALL SELECT 'CLO007' AS rule, * FROM r_clo007
UNION ALL SELECT 'WSP010' AS rule, * FROM r_wsp010
UNION ALL SELECT 'WSP011' AS rule, * FROM r_wsp011;

-- Each rule's view rule_<id> is a filter of rule_rows_boot_close, generated from the
-- catalogue (rows_view) with `violations` (brainlab/store/schema.py).;
