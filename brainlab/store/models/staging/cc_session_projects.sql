-- One definition of a project for Claude Code usage (issue 28 item 5, docs/transcripts.md
-- "Projects"): a session's project is the last folder of the session's latest working
-- directory (the cwd of its last line that states one, any agent); every call of the session
-- belongs to that project, whatever directory the call itself ran in. cc_requests,
-- usage_sessions, cc_sessions, cc_measured, `usage --project` and `simulate broker --project`
-- all read it from here, so a session's calls and the session always name the same project.
CREATE OR REPLACE VIEW cc_session_projects AS
SELECT session_id,
       any_value(cwd ORDER BY last_ts DESC) FILTER (WHERE cwd IS NOT NULL) AS cwd,
       regexp_extract(any_value(cwd ORDER BY last_ts DESC) FILTER (WHERE cwd IS NOT NULL),
                      '([^/\\]+)[/\\]*$', 1) AS project
FROM cc_spans
GROUP BY session_id;
