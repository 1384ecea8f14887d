-- measured_sessions: cc_measured (as stored in cc_session_measures by the last claude
-- ingest, brainlab.store.measured) with the matched log's sess_id (when two logs claim one
-- transcript, the one starting closest) and how each field was derived.
CREATE OR REPLACE VIEW measured_sessions AS
WITH claimed AS (
    SELECT transcript_session, sess_id FROM session_matches
    WHERE match_status = 'matched'
    QUALIFY row_number() OVER (PARTITION BY transcript_session
                               ORDER BY abs(delta_min), sess_id) = 1
)
SELECT m.transcript_session, c.sess_id, m.type, m.mode, m.started_at, m.duration_min,
       m.tokens_used, m.context_peak_pct, m.context_at_close, m.commits, m.todos_closed,
       m.kernel_files_touched, m.adrs_written, m.insights_captured, m.agents_loaded,
       m.project, m.todos_created, m.decisions_logged,
       'type: ' || m.type_derivation
       || '; mode: ' || CASE WHEN m.mode IS NULL THEN 'no +keyword in the first message'
                             ELSE '+' || m.mode || ' in the first message' END
       || '; started_at, duration_min: first to last main-chain line'
       || '; tokens_used: context size of the last main-chain request (SPEC §7)'
       || '; context_peak_pct, context_at_close: main-chain context / '
       || m.context_window_tokens || ' window'
       || '; commits: Bash calls running git commit'
       || '; todos_closed: to-do items marked completed'
       || '; kernel_files_touched: files changed under agents/, profil/, KERNEL.md, brain-compose.yml'
       || '; adrs_written: ADR files created by Write'
       || '; insights_captured: to-dos created + workspace log.md decision lines'
       || '; agents_loaded: agents/*.md read + subagents launched' AS derivation,
       m.source_file
FROM cc_session_measures m
LEFT JOIN claimed c USING (transcript_session);
