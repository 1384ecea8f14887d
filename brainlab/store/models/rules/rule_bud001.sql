CREATE OR REPLACE VIEW rule_bud001 AS
SELECT 'session' AS subject_kind, sess_id AS subject, started_at AS occurred_at,
       source_file AS file, NULL::BIGINT AS line,
       mode || ' session peaked at ' || context_peak_pct || '% of context (budget '
           || max_pct || '%' || coalesce(', acceptable with more than ' || min_commits
           || ' commits; it made ' || commits, '') || ')' AS message,
       json_object('mode', mode, 'context_peak_pct', context_peak_pct, 'commits', commits,
                   'max_pct', max_pct, 'basis', basis_used)::VARCHAR AS evidence
FROM mode_budget_checks WHERE is_over_budget;
