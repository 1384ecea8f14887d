-- SPEC §2.3 boot context target: the context of the main-chain request that carries the
-- first productive action (the last one at or before it) against the type's
-- context_target.total_boot, plus `tolerance_pct` percentage points. `calls`: the relation
-- brain_session_phases_of reads (rule_rows_boot_close passes its own copy of
-- brain_session_calls).
CREATE OR REPLACE MACRO rule_bot003_for(tolerance_pct := 5, calls := 'brain_session_calls') AS TABLE
WITH boot AS (
    SELECT p.session_id, p.subject, p.type, p.first_productive_at, p.first_productive_file,
           p.first_productive_line, coalesce(m.context_window_tokens, 200000)
               AS context_window_tokens, x.target_boot_pct,
           (SELECT arg_max(r.input_tokens + r.cache_creation_tokens + r.cache_read_tokens,
                           r.ts)
            FROM cc_request_dedup r
            WHERE r.session_id = p.session_id AND r.agent_id IS NULL
              AND r.ts <= p.first_productive_at) AS boot_tokens
    FROM brain_session_phases_of(calls := calls) p
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
