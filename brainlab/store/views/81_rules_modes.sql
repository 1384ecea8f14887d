-- Session modes (SPEC §2.7, seeds/ADR-019-session-modes), mode budgets (SPEC §3.3) and the
-- session types transcripts declare (SPEC §2.2): the transcript views the MOD, BUD and SES002
-- rules of brainlab/rules/catalogue.py read, the rules, and redirections counted per mode.
-- The modes, their perimeters and budgets are data (brainlab/modes.py -> session_modes,
-- mode_perimeters, mode_budgets), never spelled out here.

-- Every main-chain human prompt's keywords (SPEC §2.7), numbered in the session.
CREATE OR REPLACE VIEW cc_prompt_keywords AS
SELECT session_id, ts, keyword_type, keyword_mode, keyword_rule, source_file, line,
       row_number() OVER (PARTITION BY session_id ORDER BY ts NULLS LAST, source_file, line)
           AS nth
FROM cc_marks WHERE kind = 'prompt';

-- The transcript sessions that are brain sessions: a prompt declares a brain type or mode
-- (`brain <type>`, `brain +<mode>`, `brain boot [mode] <type>`), or the session is matched
-- to a metabolism log or names a claim's sess_id in a file path. Any other Claude Code
-- session is not a protocol session: the transcript rules never judge it.
CREATE OR REPLACE VIEW brain_transcripts AS
WITH declared AS (
    SELECT session_id, bool_or(keyword_type IS NOT NULL OR keyword_mode IS NOT NULL)
               AS declares
    FROM cc_prompt_keywords GROUP BY session_id
), matched AS (
    SELECT transcript_session AS session_id, min(sess_id) AS sess_id
    FROM session_matches WHERE match_status = 'matched' GROUP BY transcript_session
), claimed AS (
    SELECT DISTINCT m.transcript_session AS session_id
    FROM (SELECT transcript_session, unnest(named_sess_ids) AS sess_id
          FROM cc_session_measures) m
    JOIN claims c USING (sess_id)
), productive AS (  -- the end of boot, as every protocol rule reads it (protocol_calls)
    SELECT session_id, min(ts) AS first_productive_at
    FROM protocol_calls WHERE is_productive
    GROUP BY session_id
)
SELECT s.session_id, f.keyword_type AS declared_type, f.keyword_mode AS declared_mode,
       f.keyword_rule AS first_prompt_rule, f.ts AS first_prompt_at,
       coalesce(f.source_file, s.main_file) AS source_file, f.line AS first_prompt_line,
       m.sess_id, p.first_productive_at,
       CASE WHEN coalesce(d.declares, false) THEN 'keyword'
            WHEN m.sess_id IS NOT NULL THEN 'metabolism log' ELSE 'claim' END AS brain_evidence
FROM cc_session_spans s
LEFT JOIN cc_prompt_keywords f ON f.session_id = s.session_id AND f.nth = 1
LEFT JOIN declared d ON d.session_id = s.session_id
LEFT JOIN matched m ON m.session_id = s.session_id
LEFT JOIN productive p ON p.session_id = s.session_id
WHERE coalesce(d.declares, false) OR m.sess_id IS NOT NULL
   OR s.session_id IN (SELECT session_id FROM claimed);

-- SPEC §2.7 / ADR-019:78: a mode keyword in a later prompt instead of the first message
-- (a later prompt repeating the first message's mode declares nothing new).
CREATE OR REPLACE VIEW rule_mod001 AS
SELECT 'session' AS subject_kind, b.session_id AS subject, p.ts AS occurred_at,
       p.source_file AS file, p.line,
       '+' || p.keyword_mode || ' declared in prompt ' || p.nth
           || ', not in the first message' AS message,
       json_object('mode', p.keyword_mode, 'prompt', p.nth,
                   'first_message_mode', b.declared_mode)::VARCHAR AS evidence
FROM brain_transcripts b
JOIN cc_prompt_keywords p ON p.session_id = b.session_id
WHERE p.nth > 1 AND p.keyword_mode IS NOT NULL
  AND p.keyword_mode IS DISTINCT FROM b.declared_mode;

-- ADR-019:81 (modes/<nom>.md): a declared mode that no mode file, boot flag or metabolism
-- working mode defines (session_modes).
CREATE OR REPLACE VIEW rule_mod002 AS
SELECT 'session' AS subject_kind, b.session_id AS subject, min(p.ts) AS occurred_at,
       arg_min(p.source_file, p.nth) AS file, arg_min(p.line, p.nth) AS line,
       'unknown mode +' || p.keyword_mode || ' (known: '
           || (SELECT string_agg(mode, ', ' ORDER BY mode) FROM session_modes) || ')'
           AS message,
       json_object('mode', p.keyword_mode, 'prompt', min(p.nth))::VARCHAR AS evidence
FROM brain_transcripts b
JOIN cc_prompt_keywords p ON p.session_id = b.session_id
WHERE p.keyword_mode IS NOT NULL
  AND p.keyword_mode NOT IN (SELECT mode FROM session_modes)
GROUP BY b.session_id, p.keyword_mode;

-- ADR-019:81: the declared mode's file is read at boot, i.e. by the main chain before its
-- first productive action (protocol_calls: a write that is not bookkeeping, a non-BSI commit).
CREATE OR REPLACE VIEW rule_mod003 AS
SELECT 'session' AS subject_kind, b.session_id AS subject, b.first_prompt_at AS occurred_at,
       b.source_file AS file, b.first_prompt_line AS line,
       '+' || b.declared_mode || ' declared but ' || m.mode_file || ' was not read '
           || CASE WHEN b.first_productive_at IS NULL THEN 'at boot'
                   ELSE 'before the first productive action' END AS message,
       json_object('mode', b.declared_mode, 'mode_file', m.mode_file,
                   'first_productive_at', b.first_productive_at,
                   'read_at', r.read_at)::VARCHAR AS evidence
FROM brain_transcripts b
JOIN session_modes m ON m.mode = b.declared_mode AND m.mode_file IS NOT NULL
LEFT JOIN (SELECT t.session_id, s.mode, min(t.ts) AS read_at
           FROM cc_tool_calls t JOIN session_modes s ON s.mode_file IS NOT NULL
            AND (replace(t.file_path, '\', '/') = s.mode_file
                 OR ends_with(replace(t.file_path, '\', '/'), '/' || s.mode_file))
           WHERE t.agent_id IS NULL AND t.tool = 'Read'
           GROUP BY t.session_id, s.mode) r
  ON r.session_id = b.session_id AND r.mode = b.declared_mode
WHERE r.read_at IS NULL OR r.read_at > b.first_productive_at;

-- ADR-019:73 soft lock: work outside the declared mode's perimeter (mode_perimeters) carried
-- out anyway, by the main chain or a subagent; one row per session and kind of action.
CREATE OR REPLACE VIEW mode_perimeter_breaches AS
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
FROM brain_transcripts b
JOIN mode_perimeters p ON p.mode = b.declared_mode
JOIN actions a ON a.session_id = b.session_id AND a.action = p.action
WHERE (p.refused IS NULL OR regexp_matches(coalesce(a.path, ''), p.refused))
  AND NOT (p.allowed IS NOT NULL AND regexp_matches(coalesce(a.path, ''), p.allowed));

CREATE OR REPLACE VIEW rule_mod004 AS
SELECT 'session' AS subject_kind, session_id AS subject, min(ts) AS occurred_at,
       arg_min(source_file, ts) AS file, arg_min(line, ts) AS line,
       '+' || mode || ' session carried out ' || count(*) || ' ' || action
           || CASE WHEN count(*) > 1 THEN 's' ELSE '' END || ' outside its perimeter'
           || coalesce(' (first: ' || arg_min(path, ts) || ')', '') AS message,
       json_object('mode', mode, 'action', action, 'count', count(*),
                   'paths', list(DISTINCT path) FILTER (WHERE path IS NOT NULL),
                   'perimeter', any_value(perimeter_source))::VARCHAR AS evidence
FROM mode_perimeter_breaches
GROUP BY session_id, mode, action;

-- SPEC §3.3 mode budgets (mode_budgets) against each session's context peak, on the best
-- basis (measured where a transcript exists, else logged): BUD001 over a hard budget
-- (sprint reaching 80% unless commits > 5, conserve reaching 40%), BUD002 at or past a
-- watch line (prod 60%).
CREATE OR REPLACE VIEW mode_budget_checks AS
SELECT s.sess_id, s.started_at, s.mode, s.context_peak_pct, s.commits, s.basis_used,
       s.source_file, b.watch_pct, b.max_pct, b.min_commits, b.source AS budget_source,
       -- the rule is written once, in brainlab/spec/modes.py (the status line reads it too)
       budget_over(s.context_peak_pct, s.commits, b.max_pct, b.min_commits) AS is_over_budget,
       budget_watch(s.context_peak_pct, b.watch_pct) AS is_past_watch
FROM basis_sessions('best') s JOIN mode_budgets b ON b.mode = lower(s.mode)
WHERE s.context_peak_pct IS NOT NULL;

CREATE OR REPLACE VIEW rule_bud001 AS
SELECT 'session' AS subject_kind, sess_id AS subject, started_at AS occurred_at,
       source_file AS file, NULL::BIGINT AS line,
       mode || ' session peaked at ' || context_peak_pct || '% of context (budget '
           || max_pct || '%' || coalesce(', acceptable with more than ' || min_commits
           || ' commits; it made ' || commits, '') || ')' AS message,
       json_object('mode', mode, 'context_peak_pct', context_peak_pct, 'commits', commits,
                   'max_pct', max_pct, 'basis', basis_used)::VARCHAR AS evidence
FROM mode_budget_checks WHERE is_over_budget;

CREATE OR REPLACE VIEW rule_bud002 AS
SELECT 'session' AS subject_kind, sess_id AS subject, started_at AS occurred_at,
       source_file AS file, NULL::BIGINT AS line,
       mode || ' session peaked at ' || context_peak_pct || '% of context, past the '
           || watch_pct || '% watch line' AS message,
       json_object('mode', mode, 'context_peak_pct', context_peak_pct,
                   'watch_pct', watch_pct, 'basis', basis_used)::VARCHAR AS evidence
FROM mode_budget_checks WHERE is_past_watch;

-- SPEC §2.2: a brain session type declared in a transcript that SPEC §2.2 does not know
-- (`brain boot [mode] <word>`, the explicit trigger; `brain <word>` prose is not a type).
CREATE OR REPLACE VIEW rule_ses002 AS
SELECT 'session' AS subject_kind, b.session_id AS subject, p.ts AS occurred_at,
       p.source_file AS file, p.line,
       'transcript declares session type "' || p.keyword_type || '", not a SPEC §2.2 type'
           AS message,
       json_object('type', p.keyword_type, 'prompt', p.nth, 'where', 'transcript')::VARCHAR
           AS evidence
FROM brain_transcripts b
JOIN cc_prompt_keywords p ON p.session_id = b.session_id
WHERE p.keyword_type IS NOT NULL
  AND lower(p.keyword_type) NOT IN (SELECT type FROM session_categories);

-- SPEC §2.7 "Measurable": redirections (the soft lock refusing and sending the work to a
-- dedicated session, ADR-019:84) per declared mode, and the share of brain sessions that
-- declare a mode. One row per mode ('(none)': brain sessions without a mode).
CREATE OR REPLACE VIEW mode_redirections AS
WITH redirects AS (
    SELECT session_id, count(*) AS redirections,
           list(DISTINCT item_key ORDER BY item_key) AS phrases
    FROM cc_marks WHERE kind = 'redirect' AND agent_id IS NULL GROUP BY session_id
), sessions AS (
    SELECT coalesce(b.declared_mode, '(none)') AS mode, b.session_id,
           coalesce(r.redirections, 0) AS redirections, coalesce(r.phrases, []) AS phrases
    FROM brain_transcripts b LEFT JOIN redirects r USING (session_id)
)
SELECT mode, m.kind AS mode_kind, count(*) AS sessions,
       round(count(*) / sum(count(*)) OVER (), 3) AS session_share,
       CAST(sum(redirections) AS BIGINT) AS redirections,
       count(*) FILTER (WHERE redirections > 0) AS sessions_redirecting,
       round(sum(redirections) / count(*), 2) AS redirections_per_session,
       list_sort(list_distinct(flatten(list(phrases)))) AS phrases
FROM sessions LEFT JOIN session_modes m USING (mode)
GROUP BY mode, m.kind;
