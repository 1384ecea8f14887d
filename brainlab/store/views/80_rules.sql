-- Protocol compliance (issue 14): one view per rule of brainlab/rules/catalogue.py, each
-- returning its violations with the same columns (subject_kind, subject, at, file, line,
-- message, evidence), and `violations`, their union with the catalogue's id and severity.

-- The brain's clock: the latest moment any brain file records. Time rules (TTLs, retention)
-- are judged at this instant, not at the wall clock, so a check is reproducible.
CREATE OR REPLACE VIEW brain_clock AS
SELECT max(t) AS as_of FROM (
    SELECT max(started_at) AS t FROM raw_metabolism_logs
    UNION ALL SELECT max(greatest(opened_at, closed_at)) FROM claims
    UNION ALL SELECT max(greatest(started_at, ended_at)) FROM sprints
    UNION ALL SELECT max(event_at) FROM circuit_events
    UNION ALL SELECT max(TRY_CAST(decided_on AS TIMESTAMP)) FROM decisions
);

-- SPEC §2.2: types kept verbatim with category unknown are reported.
CREATE OR REPLACE VIEW rule_ses001 AS
SELECT 'session' AS subject_kind, l.sess_id AS subject, l.started_at AS occurred_at,
       l.source_file AS file, NULL::BIGINT AS line,
       'session type "' || l.type || '" is not a SPEC §2.2 type' AS message,
       json_object('type', l.type, 'where', 'metabolism log')::VARCHAR AS evidence
FROM raw_metabolism_logs l
WHERE l.type IS NOT NULL AND lower(trim(l.type)) NOT IN (SELECT type FROM session_categories)
UNION ALL
SELECT 'session', c.sess_id, c.opened_at, c.source_file, NULL,
       'claim type "' || c.type || '" is not a SPEC §2.2 type',
       json_object('type', c.type, 'where', 'claim')::VARCHAR
FROM claims c
WHERE c.type IS NOT NULL AND lower(trim(c.type)) NOT IN (SELECT type FROM session_categories);

-- SPEC §2.4 step 1: a closed session has its metabolism log.
CREATE OR REPLACE VIEW rule_clo001 AS
SELECT 'session' AS subject_kind, c.sess_id AS subject, coalesce(c.closed_at, c.opened_at) AS occurred_at,
       c.source_file AS file, NULL::BIGINT AS line,
       'claim closed but no metabolism log for ' || c.sess_id AS message,
       json_object('status', c.status, 'closed_at', c.closed_at)::VARCHAR AS evidence
FROM claims c
WHERE c.status = 'closed'
  AND NOT EXISTS (SELECT 1 FROM raw_metabolism_logs l WHERE l.sess_id = c.sess_id)
  -- a brain that keeps no metabolism log at all (the public template) is not judged
  AND EXISTS (SELECT 1 FROM raw_metabolism_logs);

-- SPEC §2.4 step 5: a session that wrote its log also closed its claim.
CREATE OR REPLACE VIEW rule_clo002 AS
SELECT 'session' AS subject_kind, l.sess_id AS subject, l.started_at AS occurred_at,
       l.source_file AS file, NULL::BIGINT AS line,
       CASE WHEN c.sess_id IS NULL THEN 'metabolism log written but no claim file for '
                                        || l.sess_id
            ELSE 'metabolism log written but the claim is still ' || coalesce(c.status, '?')
       END AS message,
       json_object('claim_status', c.status)::VARCHAR AS evidence
FROM raw_metabolism_logs l
LEFT JOIN (SELECT sess_id, arg_max(status, coalesce(closed_at, opened_at)) AS status
           FROM claims GROUP BY sess_id) c USING (sess_id)
WHERE c.status IS DISTINCT FROM 'closed'
  AND EXISTS (SELECT 1 FROM claims);  -- a brain that keeps no claims at all is not judged

-- SPEC §2.6: open past the TTL, at the brain's clock.
CREATE OR REPLACE VIEW rule_clm001 AS
SELECT 'claim' AS subject_kind, s.sess_id AS subject, s.opened_at AS occurred_at,
       s.source_file AS file, NULL::BIGINT AS line,
       'claim ' || s.status || ' since ' || strftime(s.opened_at, '%Y-%m-%d %H:%M')
           || ', past its ' || s.ttl_hours || ' h TTL' AS message,
       json_object('type', s.type, 'opened_at', s.opened_at, 'ttl_hours', s.ttl_hours,
                   'expires_at', s.expires_at, 'as_of', k.as_of)::VARCHAR AS evidence
FROM brain_clock k, claim_status_at(coalesce(k.as_of, TIMESTAMP '1970-01-01')) s
WHERE s.is_stale AND s.status IS DISTINCT FROM 'closed';

-- SPEC §3.1: the scribe's mandatory fields.
CREATE OR REPLACE VIEW rule_met001 AS
SELECT 'session' AS subject_kind, sess_id AS subject, started_at AS occurred_at, source_file AS file,
       NULL::BIGINT AS line,
       'metabolism log lacks ' || array_to_string(missing_fields, ', ') AS message,
       json_object('missing', missing_fields)::VARCHAR AS evidence
FROM raw_metabolism_logs WHERE len(coalesce(missing_fields, [])) > 0;

-- Broker inhale source maps (SPEC §4.2), one row per block, agent and loaded file. Every
-- block is judged, not only the last one per sprint (a map printed then re-planned was still
-- printed), once: a brain file and a transcript carrying the same block are one (79_broker_once).
CREATE OR REPLACE VIEW broker_loads_checked AS
SELECT b.block_id, b.sprint AS sprint_id, b.project, b.session_id, b.ts, f.agent, f.path,
       f.source_file, f.line
FROM broker_block_files f JOIN broker_blocks_once b USING (block_id)
WHERE b.kind = 'inhale' AND f.action = 'load';

-- SPEC §4.2: at most 2 sources per agent.
CREATE OR REPLACE VIEW rule_brk001 AS
SELECT 'agent-sprint' AS subject_kind, sprint_id || '/' || agent AS subject, min(ts) AS occurred_at,
       min(source_file) AS file, min(line) AS line,
       agent || ' gets ' || count(DISTINCT path) || ' sources (max 2): '
           || string_agg(DISTINCT path, ', ') AS message,
       json_object('sources', list(DISTINCT path), 'count', count(DISTINCT path))::VARCHAR
           AS evidence
FROM broker_loads_checked
GROUP BY block_id, sprint_id, agent HAVING count(DISTINCT path) > 2;

-- SPEC §4.2: no source already in context since boot (the sprint's session type's layers).
CREATE OR REPLACE VIEW rule_brk002 AS
WITH session_type AS (  -- the claim's type (a SPEC §2.2 type), else the log's
    SELECT sess_id, lower(arg_min(type, priority)) AS type FROM (
        SELECT sess_id, type, 0 AS priority FROM claims
        UNION ALL SELECT sess_id, type, 1 FROM raw_metabolism_logs)
    WHERE type IS NOT NULL GROUP BY sess_id
), boot AS (
    SELECT b.sprint_id, b.agent, b.path, b.source_file, b.line, b.ts, t.type, cf.layer,
           replace(cf.path, '{project}', coalesce(b.project, '')) AS boot_path
    FROM broker_loads_checked b
    JOIN (SELECT session_id AS sess_id, sprint_id FROM sprints
          UNION SELECT session_id, sprint_id FROM broker_loads_checked) s USING (sprint_id)
    JOIN session_type t ON t.sess_id = s.sess_id
    JOIN context_files cf ON cf.session_type = t.type
)
SELECT DISTINCT 'agent-sprint' AS subject_kind, sprint_id || '/' || agent AS subject, ts AS occurred_at,
       source_file AS file, line,
       agent || ' loads ' || path || ', already in context since boot (' || type || ' '
           || layer || ')' AS message,
       json_object('path', path, 'session_type', type, 'layer', layer)::VARCHAR AS evidence
FROM boot
WHERE boot_path = path OR ends_with(boot_path, '/' || path) OR ends_with(path, '/' || boot_path);

-- SPEC §4.3: a stable domain (no open to-do) is released, not kept.
CREATE OR REPLACE VIEW rule_brk003 AS
WITH todos AS (
    SELECT sprint_id, bool_or(len(coalesce(open_todos, [])) > 0) AS has_open_todos,
           flatten(list(coalesce(open_todos, []))) AS open_todos, count(*) AS agents
    FROM sprint_agents GROUP BY sprint_id
)
SELECT DISTINCT 'sprint' AS subject_kind, f.sprint AS subject, e.ts AS occurred_at,
       f.source_file AS file, f.line,
       'keeps ' || f.path || ' although no agent of the sprint has an open to-do' AS message,
       json_object('path', f.path, 'open_todos', t.open_todos)::VARCHAR AS evidence
FROM broker_block_files f JOIN broker_blocks_once e USING (block_id)
JOIN todos t ON t.sprint_id = f.sprint
WHERE e.kind = 'expire' AND f.action = 'garder' AND NOT t.has_open_todos;

-- SPEC §4.2 / §4.4: a source loaded for an agent that never referenced it ("au cas où").
-- Judged only for sprints whose references were recorded.
CREATE OR REPLACE VIEW rule_brk004 AS
SELECT 'agent-sprint' AS subject_kind, b.sprint_id || '/' || b.agent AS subject, b.ts AS occurred_at,
       b.source_file AS file, b.line,
       b.agent || ' loaded ' || b.path || ' and never referenced it' AS message,
       json_object('path', b.path, 'references', (
           SELECT list(DISTINCT r.path) FROM sprint_refs r
           WHERE r.sprint_id = b.sprint_id AND r.agent = b.agent))::VARCHAR AS evidence
FROM broker_loads_checked b
WHERE EXISTS (SELECT 1 FROM sprint_refs r WHERE r.sprint_id = b.sprint_id)
  AND NOT EXISTS (SELECT 1 FROM sprint_refs r
                  WHERE r.sprint_id = b.sprint_id AND r.agent = b.agent
                    AND (r.path = b.path OR ends_with(r.path, '/' || b.path)));

-- SPEC §5 lifecycle: TTL = sprint end (the workspace's last decision) + ttl (default 7d).
CREATE OR REPLACE VIEW workspace_lifecycle AS
WITH last_decision AS (
    SELECT workspace, max(TRY_CAST(decided_on AS DATE)) AS last_decision_on
    FROM decisions GROUP BY workspace
)
SELECT w.workspace, w.source_file, w.archive, d.last_decision_on,
       coalesce(TRY_CAST(regexp_extract(w.ttl, '^\s*(\d+)\s*d', 1) AS INTEGER), 7) AS ttl_days,
       CASE w.archive WHEN '30d' THEN 30 WHEN '90d' THEN 90 END AS retention_days,
       d.last_decision_on + coalesce(TRY_CAST(regexp_extract(w.ttl, '^\s*(\d+)\s*d', 1)
           AS INTEGER), 7) AS expired_on,
       k.as_of
FROM workspaces w JOIN last_decision d USING (workspace), brain_clock k
WHERE d.last_decision_on IS NOT NULL AND k.as_of IS NOT NULL;

CREATE OR REPLACE VIEW rule_wsp001 AS
SELECT 'workspace' AS subject_kind, workspace AS subject, CAST(expired_on AS TIMESTAMP) AS occurred_at,
       source_file AS file, NULL::BIGINT AS line,
       'archive: auto but TTL expired on ' || expired_on || ' and the workspace is still here'
           AS message,
       json_object('last_decision_on', last_decision_on, 'ttl_days', ttl_days,
                   'expired_on', expired_on, 'as_of', as_of)::VARCHAR AS evidence
FROM workspace_lifecycle WHERE archive = 'auto' AND as_of >= expired_on + 1;

CREATE OR REPLACE VIEW rule_wsp002 AS
SELECT 'workspace' AS subject_kind, workspace AS subject, CAST(expired_on AS TIMESTAMP) AS occurred_at,
       source_file AS file, NULL::BIGINT AS line,
       'archive: keep, TTL expired on ' || expired_on || ': waiting for a human decision'
           AS message,
       json_object('last_decision_on', last_decision_on, 'ttl_days', ttl_days,
                   'expired_on', expired_on, 'as_of', as_of)::VARCHAR AS evidence
FROM workspace_lifecycle WHERE archive = 'keep' AND as_of >= expired_on + 1;

CREATE OR REPLACE VIEW rule_wsp003 AS
SELECT 'workspace' AS subject_kind, workspace AS subject, CAST(expired_on AS TIMESTAMP) AS occurred_at,
       source_file AS file, NULL::BIGINT AS line,
       'archive: ' || archive || ' but the retention ended on ' || (expired_on + retention_days)
           || ' and the workspace is still here' AS message,
       json_object('last_decision_on', last_decision_on, 'ttl_days', ttl_days,
                   'retention_days', retention_days, 'expired_on', expired_on,
                   'as_of', as_of)::VARCHAR AS evidence
FROM workspace_lifecycle
WHERE retention_days IS NOT NULL AND as_of >= expired_on + retention_days + 1;

-- SPEC §5 structure rules, from workspace_violations (views/25_hygiene.sql).
CREATE OR REPLACE VIEW workspace_violations_located AS
SELECT v.*, coalesce(
           (SELECT any_value(f.source_file) FROM workspace_files f
            WHERE f.workspace = v.workspace AND f.file_name = v.file_name),
           (SELECT any_value(regexp_replace(f.source_file, '/[^/]+$', '') || '/' || v.file_name)
            FROM workspace_files f WHERE f.workspace = v.workspace)) AS file
FROM workspace_violations v;

CREATE OR REPLACE VIEW rule_wsp004 AS
SELECT 'workspace' AS subject_kind, workspace AS subject, NULL::TIMESTAMP AS occurred_at, file,
       CAST(line AS BIGINT) AS line, detail AS message,
       json_object('file_name', file_name)::VARCHAR AS evidence
FROM workspace_violations_located WHERE rule = 'file-not-allowed';

CREATE OR REPLACE VIEW rule_wsp005 AS
SELECT 'workspace' AS subject_kind, workspace AS subject, NULL::TIMESTAMP AS occurred_at, file,
       CAST(line AS BIGINT) AS line, detail AS message,
       json_object('detail', detail)::VARCHAR AS evidence
FROM workspace_violations_located WHERE rule = 'readme-too-long';

CREATE OR REPLACE VIEW rule_wsp006 AS
SELECT 'workspace' AS subject_kind, workspace AS subject, NULL::TIMESTAMP AS occurred_at, file,
       CAST(line AS BIGINT) AS line, detail AS message,
       json_object('detail', detail)::VARCHAR AS evidence
FROM workspace_violations_located WHERE rule = 'ram-too-long';

CREATE OR REPLACE VIEW rule_wsp007 AS
SELECT 'workspace' AS subject_kind, workspace AS subject, NULL::TIMESTAMP AS occurred_at, file,
       CAST(line AS BIGINT) AS line, detail AS message,
       json_object('detail', detail)::VARCHAR AS evidence
FROM workspace_violations_located WHERE rule = 'malformed-log-line';

CREATE OR REPLACE VIEW rule_wsp008 AS
SELECT 'workspace' AS subject_kind, workspace AS subject, NULL::TIMESTAMP AS occurred_at, file,
       CAST(line AS BIGINT) AS line, detail AS message,
       json_object('detail', detail)::VARCHAR AS evidence
FROM workspace_violations_located WHERE rule IN ('unknown-archive', 'missing-readme');

-- SPEC §5 read rights: feedback.md is never read during an active sprint (transcripts).
CREATE OR REPLACE VIEW rule_wsp009 AS
SELECT 'workspace' AS subject_kind, l.workspace AS subject, t.ts AS occurred_at,
       t.source_file AS file, t.line,
       coalesce(t.subagent_type, 'the main session') || ' read ' || l.workspace
           || '/feedback.md during the sprint (last decision ' || l.last_decision_on || ')'
           AS message,
       json_object('agent', coalesce(t.subagent_type, 'main'), 'ts', t.ts,
                   'last_decision_on', l.last_decision_on)::VARCHAR AS evidence
FROM cc_tool_calls t
JOIN workspace_lifecycle l
  ON regexp_extract(t.file_path, '(^|/)workspace/([^/]+)/feedback\.md$', 2) = l.workspace
WHERE t.tool = 'Read' AND CAST(t.ts AS DATE) <= l.last_decision_on;

-- SPEC §6.2: a stop's name and code agree with the stop table.
CREATE OR REPLACE VIEW rule_cir001 AS
SELECT 'ticket' AS subject_kind, e.ticket AS subject, e.event_at AS occurred_at, e.source_file AS file,
       e.line,
       'stop ' || e.name || ' carries code ' || coalesce(CAST(e.code AS VARCHAR), 'none')
           || ' (the stop table says ' || coalesce(CAST(s.code AS VARCHAR), 'none') || ')'
           AS message,
       json_object('name', e.name, 'code', e.code, 'expected_code', s.code)::VARCHAR AS evidence
FROM circuit_events e JOIN stop_codes s ON s.name = e.name
WHERE e.event = 'stop' AND e.code IS DISTINCT FROM s.code;

-- SPEC §6.1 / §6.5: the developer (2.3) comes after the testwriter's red test (2.1).
CREATE OR REPLACE VIEW rule_cir002 AS
SELECT 'ticket' AS subject_kind, d.ticket AS subject, d.event_at AS occurred_at,
       d.source_file AS file, d.line,
       'step 2.3 (code) on ' || d.component || ' with no step 2.1 (tests) before it'
           AS message,
       json_object('component', d.component, 'at', d.event_at)::VARCHAR AS evidence
FROM circuit_events_ordered d
WHERE d.event = 'step' AND d.step = '2.3' AND NOT EXISTS (
    SELECT 1 FROM circuit_events_ordered t
    WHERE t.ticket = d.ticket AND t.event = 'step' AND t.step = '2.1'
      AND t.component = d.component AND t.seq < d.seq);

-- `violations`, the union of every rule view with the catalogue's id and severity, is
-- generated from the catalogue after all view files (brainlab/store/schema.py).
