-- Measured tokens and cost per circuit ticket (issue 24, "cost where people ask for it"): a
-- Claude Code session whose working directory (cc_session_projects: its latest) is a worktree
-- `.claude/worktrees/<ticket>`, or a folder below it, belongs to that ticket (the circuit runs
-- each ticket in its own worktree; usage_calls.ticket). From usage_by, the one place usage
-- is summed.
CREATE OR REPLACE VIEW ticket_usage AS
SELECT ticket, sessions AS claude_sessions, total_tokens AS measured_tokens,
       cost_usd AS measured_cost_usd, requests
FROM usage_by(calls := usage_calls, grain := 'total', dims := ['ticket'])
WHERE ticket IS NOT NULL;
