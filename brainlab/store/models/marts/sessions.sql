-- The session and agent-load tables everyone queries: metabolism logs and Claude Code
-- transcripts side by side (issue 3, SPEC §7 mapping), `source` saying which. A real brain
-- session may have both a log and a transcript, so metabolism metrics (ratio, coach, weekly
-- counts, agent cost) read metabolism_sessions / metabolism_agent_loads (one basis, issue 13)
-- and never count twice.
CREATE OR REPLACE VIEW sessions AS
SELECT * EXCLUDE (basis_used, transcript_session) FROM scored_sessions(basis := 'logged')
UNION ALL BY NAME
SELECT * FROM transcript_sessions;
