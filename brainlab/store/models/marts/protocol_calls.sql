-- The main-chain tool calls of every transcript, classified the one way the protocol rules
-- read them (issue 14): the boot ends at the first productive call (SPEC §2.3; BOT001-003 and
-- the mode file of MOD003), the close's last step is a claim close (SPEC §2.4), a close agent
-- is a launch or an agents/<name>.md read.
-- Productive: an Edit/Write/MultiEdit/NotebookEdit of a file that is not the protocol's own
-- bookkeeping (claims/*.yml, BRAIN-INDEX.md, progression/, handoffs/, todo/, focus.md,
-- now.md: a session opens its claim at boot), or a `git commit` that is not a BSI claim
-- commit (the word bsi in its command). Claim close: a write of claims/<sess>.yml,
-- `bsi-claim close` or a 'bsi: close claim' commit (seeds/session-orchestrator.md.txt:364).
CREATE OR REPLACE VIEW protocol_calls AS
SELECT t.session_id, t.ts, t.tool, t.file_path, t.launched_subagent_type, t.source_file, t.line,
       (t.tool IN ('Edit', 'Write', 'MultiEdit', 'NotebookEdit') AND t.file_path IS NOT NULL
        AND NOT regexp_matches(t.file_path,
            '(^|[/\\])(claims[/\\][^/\\]+\.ya?ml$|BRAIN-INDEX\.md$|focus\.md$|now\.md$'
            || '|progression[/\\]|handoffs[/\\]|todo[/\\])'))
       OR (coalesce(t.is_git_commit, false)
           AND NOT regexp_matches(coalesce(t.command, ''), '\bbsi\b', 'i')) AS is_productive,
       (t.tool IN ('Edit', 'Write', 'MultiEdit') AND t.file_path IS NOT NULL
        AND regexp_matches(t.file_path, '(^|[/\\])claims[/\\][^/\\]+\.ya?ml$'))
       OR (t.tool = 'Bash' AND regexp_matches(coalesce(t.command, ''),
           'bsi-claim(\.sh)?\s+close|bsi:\s*close', 'i')) AS is_claim_close,
       CASE WHEN t.tool IN ('Task', 'Agent') THEN lower(t.launched_subagent_type)
            WHEN t.tool = 'Read' THEN lower(regexp_extract(
                t.file_path, '(^|[/\\])agents[/\\]([^/\\]+)\.md$', 2)) END AS agent,
       t.tool_use_id  -- the grain: a line can carry several calls (parallel tool use)
FROM cc_tool_calls t
WHERE t.agent_id IS NULL;
