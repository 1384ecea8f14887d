-- The rules that judge what a brain transcript declares (the mode rules MOD001-004, SES002's
-- session type) in one relation (column `rule`), so brain_transcripts, which each of them
-- reads, is one MATERIALIZED CTE (`transcripts`) evaluated once per query instead of
-- once per rule (docs/compliance.md); `violations` reads this view once for all of them
-- (catalogue `rows_view`), rule_<id> is its filter.
CREATE OR REPLACE VIEW rule_rows_modes AS
WITH transcripts AS MATERIALIZED (SELECT * FROM brain_transcripts),
r_mod001 AS (
    -- SPEC §2.7 / ADR-019:78: a mode keyword in a later prompt instead of the first message
    -- (a later prompt repeating the first message's mode declares nothing new).
    SELECT 'session' AS subject_kind, b.session_id AS subject, p.ts AS occurred_at,
           p.source_file AS file, p.line,
           '+' || p.keyword_mode || ' declared in prompt ' || p.nth
               || ', not in the first message' AS message,
           json_object('mode', p.keyword_mode, 'prompt', p.nth,
                       'first_message_mode', b.declared_mode)::VARCHAR AS evidence
    FROM transcripts b
    JOIN cc_prompt_keywords p ON p.session_id = b.session_id
    WHERE p.nth > 1 AND p.keyword_mode IS NOT NULL
      AND p.keyword_mode IS DISTINCT FROM b.declared_mode
),
r_mod002 AS (
    -- ADR-019:81 (modes/<nom>.md): a declared mode that no mode file, boot flag or metabolism
    -- working mode defines (session_modes).
    SELECT 'session' AS subject_kind, b.session_id AS subject, min(p.ts) AS occurred_at,
           arg_min(p.source_file, p.nth) AS file, arg_min(p.line, p.nth) AS line,
           'unknown mode +' || p.keyword_mode || ' (known: '
               || (SELECT string_agg(mode, ', ' ORDER BY mode) FROM session_modes) || ')'
               AS message,
           json_object('mode', p.keyword_mode, 'prompt', min(p.nth))::VARCHAR AS evidence
    FROM transcripts b
    JOIN cc_prompt_keywords p ON p.session_id = b.session_id
    WHERE p.keyword_mode IS NOT NULL
      AND p.keyword_mode NOT IN (SELECT mode FROM session_modes)
    GROUP BY b.session_id, p.keyword_mode
),
r_mod003 AS (
    -- ADR-019:81: the declared mode's file is read at boot, i.e. by the main chain before its
    -- first productive action (protocol_calls: a write that is not bookkeeping, a non-BSI commit).
    SELECT 'session' AS subject_kind, b.session_id AS subject, b.first_prompt_at AS occurred_at,
           b.source_file AS file, b.first_prompt_line AS line,
           '+' || b.declared_mode || ' declared but ' || m.mode_file || ' was not read '
               || CASE WHEN b.first_productive_at IS NULL THEN 'at boot'
                       ELSE 'before the first productive action' END AS message,
           json_object('mode', b.declared_mode, 'mode_file', m.mode_file,
                       'first_productive_at', b.first_productive_at,
                       'read_at', r.read_at)::VARCHAR AS evidence
    FROM transcripts b
    JOIN session_modes m ON m.mode = b.declared_mode AND m.mode_file IS NOT NULL
    LEFT JOIN (SELECT t.session_id, s.mode, min(t.ts) AS read_at
               FROM cc_tool_calls t JOIN session_modes s ON s.mode_file IS NOT NULL
                AND (replace(t.file_path, '\', '/') = s.mode_file
                     OR ends_with(replace(t.file_path, '\', '/'), '/' || s.mode_file))
               WHERE t.agent_id IS NULL AND t.tool = 'Read'
               GROUP BY t.session_id, s.mode) r
      ON r.session_id = b.session_id AND r.mode = b.declared_mode
    WHERE r.read_at IS NULL OR r.read_at > b.first_productive_at
),
r_mod004 AS (
    -- ADR-019:73 soft lock: one row per session and kind of action carried out outside
    -- the declared mode's perimeter (mode_perimeter_breaches).
    SELECT 'session' AS subject_kind, session_id AS subject, min(ts) AS occurred_at,
           arg_min(source_file, ts) AS file, arg_min(line, ts) AS line,
           '+' || mode || ' session carried out ' || count(*) || ' ' || action
               || CASE WHEN count(*) > 1 THEN 's' ELSE '' END || ' outside its perimeter'
               || coalesce(' (first: ' || arg_min(path, ts) || ')', '') AS message,
           json_object('mode', mode, 'action', action, 'count', count(*),
                       'paths', list(DISTINCT path ORDER BY path) FILTER (WHERE path IS NOT NULL),
                       'perimeter', any_value(perimeter_source))::VARCHAR AS evidence
    FROM mode_perimeter_breaches_of(transcripts := transcripts)
    GROUP BY session_id, mode, action
),
r_ses002 AS (
    -- SPEC §2.2: a brain session type declared in a transcript that SPEC §2.2 does not know
    -- (`brain boot [mode] <word>`, the explicit trigger; `brain <word>` prose is not a type).
    SELECT 'session' AS subject_kind, b.session_id AS subject, p.ts AS occurred_at,
           p.source_file AS file, p.line,
           'transcript declares session type "' || p.keyword_type || '", not a SPEC §2.2 type'
               AS message,
           json_object('type', p.keyword_type, 'prompt', p.nth, 'where', 'transcript')::VARCHAR
               AS evidence
    FROM transcripts b
    JOIN cc_prompt_keywords p ON p.session_id = b.session_id
    WHERE p.keyword_type IS NOT NULL
      AND lower(p.keyword_type) NOT IN (SELECT type FROM session_categories)
)
SELECT 'MOD001' AS rule, * FROM r_mod001
UNION ALL SELECT 'MOD002' AS rule, * FROM r_mod002
UNION ALL SELECT 'MOD003' AS rule, * FROM r_mod003
UNION ALL SELECT 'MOD004' AS rule, * FROM r_mod004
UNION ALL SELECT 'SES002' AS rule, * FROM r_ses002;
