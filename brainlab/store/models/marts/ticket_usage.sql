-- Measured tokens and cost per circuit ticket (issue 24, "cost where people ask for it"): a
-- Claude Code session whose working directory (cc_session_projects: its latest) is a worktree
-- `.claude/worktrees/<ticket>`, or a folder below it, belongs to that ticket (the circuit runs
-- each ticket in its own worktree). Sums of the deduplicated, priced calls (cc_requests).
CREATE OR REPLACE VIEW ticket_usage AS
WITH sessions AS (
    SELECT session_id,
           regexp_extract(cwd, '[/\\]\.claude[/\\]worktrees[/\\]([^/\\]+)', 1) AS ticket
    FROM cc_session_projects
)
SELECT s.ticket, count(DISTINCT r.session_id) AS claude_sessions,
       CAST(sum(r.input_tokens + r.output_tokens + r.cache_creation_tokens
                + r.cache_read_tokens) AS BIGINT) AS measured_tokens,
       sum(r.cost_usd) AS measured_cost_usd, count(*) AS requests
FROM cc_requests r JOIN sessions s USING (session_id)
WHERE s.ticket <> ''
GROUP BY s.ticket;
