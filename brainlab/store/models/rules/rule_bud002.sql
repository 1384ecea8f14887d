CREATE OR REPLACE VIEW rule_bud002 AS
SELECT 'session' AS subject_kind, sess_id AS subject, started_at AS occurred_at,
       source_file AS file, NULL::BIGINT AS line,
       mode || ' session peaked at ' || context_peak_pct || '% of context, past the '
           || watch_pct || '% watch line' AS message,
       json_object('mode', mode, 'context_peak_pct', context_peak_pct,
                   'watch_pct', watch_pct, 'basis', basis_used)::VARCHAR AS evidence
FROM mode_budget_checks WHERE is_past_watch;
