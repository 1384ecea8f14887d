-- Coverage of the matching: logs matched, ambiguous, unmatched; transcripts with no log.
CREATE OR REPLACE VIEW session_match_summary AS
SELECT
    (SELECT count(*) FROM session_matches) AS logs,
    (SELECT count(*) FROM session_matches WHERE match_status = 'matched') AS matched,
    (SELECT count(*) FROM session_matches WHERE match_status = 'ambiguous') AS ambiguous,
    (SELECT count(*) FROM session_matches WHERE match_status = 'unmatched') AS unmatched,
    (SELECT count(*) FROM measured_sessions) AS transcripts,
    (SELECT count(*) FROM measured_sessions WHERE sess_id IS NULL) AS transcripts_without_log;
