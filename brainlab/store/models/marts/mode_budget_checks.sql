-- SPEC §3.3 mode budgets (mode_budgets) against each session's context peak, on the best
-- basis (measured where a transcript exists, else logged): BUD001 over a hard budget
-- (sprint reaching 80% unless commits > 5, conserve reaching 40%), BUD002 at or past a
-- watch line (prod 60%).
CREATE OR REPLACE VIEW mode_budget_checks AS
SELECT s.sess_id, s.started_at, s.mode, s.context_peak_pct, s.commits, s.basis_used,
       s.source_file, b.watch_pct, b.max_pct, b.min_commits, b.source AS budget_source,
       -- the rule is written once, in brainlab/spec/budget_rule.py (the status line reads it
       -- too); the store writes it as the macros budget_over and budget_watch
       budget_over(s.context_peak_pct, s.commits, b.max_pct, b.min_commits) AS is_over_budget,
       budget_watch(s.context_peak_pct, b.watch_pct) AS is_past_watch
FROM basis_sessions('best') s JOIN mode_budgets b ON b.mode = lower(s.mode)
WHERE s.context_peak_pct IS NOT NULL;
