-- Each metabolism log matched to its transcript (issue 13 §2). Candidates: transcripts that
-- start within `tolerance_min` of the log's start, or whose file paths name the log's sess_id
-- (the scribe writing progression/metabolism/<date>-<sess_id>.md or claims/<sess_id>.yml).
-- Evidence score: sess_id named in a path 4, same project 2, start within 5 min 1. The one
-- best-scored candidate is `matched`; a tie at the top is `ambiguous` (candidates listed);
-- no candidate is `unmatched`. Never silent: one row per log.
CREATE OR REPLACE MACRO session_matches_for(tolerance_min := 30) AS TABLE
WITH logs AS (
    SELECT sess_id, started_at, project FROM stg_metabolism_sessions
), named AS (
    SELECT DISTINCT transcript_session, unnest(named_sess_ids) AS sess_id
    FROM cc_session_measures
), pairs AS (
    SELECT l.sess_id, c.transcript_session
    FROM logs l JOIN cc_session_measures c
      ON c.started_at >= l.started_at - to_minutes(CAST(tolerance_min AS BIGINT))
     AND c.started_at <= l.started_at + to_minutes(CAST(tolerance_min AS BIGINT))
    UNION
    SELECT n.sess_id, n.transcript_session FROM named n JOIN logs l USING (sess_id)
), scored AS (
    SELECT p.sess_id, p.transcript_session,
           round(date_diff('second', l.started_at, c.started_at) / 60.0, 1) AS delta_min,
           n.sess_id IS NOT NULL AS is_named,
           coalesce(l.project = c.project, false) AS is_same_project
    FROM pairs p
    JOIN logs l USING (sess_id)
    JOIN cc_session_measures c USING (transcript_session)
    LEFT JOIN named n ON n.sess_id = p.sess_id AND n.transcript_session = p.transcript_session
), ranked AS (
    SELECT *,
        4 * is_named::INT + 2 * is_same_project::INT
            + (abs(coalesce(delta_min, 1e9)) <= 5)::INT AS score
    FROM scored
), top AS (
    SELECT *, count(*) OVER (PARTITION BY sess_id, score) AS n_at_score,
           max(score) OVER (PARTITION BY sess_id) AS best_score
    FROM ranked
), summary AS (
    SELECT sess_id,
        count(*) FILTER (WHERE score = best_score) AS n_best,
        any_value(transcript_session) FILTER (WHERE score = best_score) AS best_transcript,
        any_value(delta_min) FILTER (WHERE score = best_score) AS best_delta,
        any_value(is_named) FILTER (WHERE score = best_score) AS best_named,
        any_value(is_same_project) FILTER (WHERE score = best_score) AS best_project,
        list(transcript_session || ' (Δt ' || coalesce(delta_min::VARCHAR, '?') || ' min, score '
             || score || ')'
             ORDER BY score DESC, abs(delta_min), delta_min, transcript_session) AS candidates
    FROM top GROUP BY sess_id
)
SELECT l.sess_id,
    CASE WHEN s.n_best = 1 THEN s.best_transcript END AS transcript_session,
    CASE WHEN s.sess_id IS NULL THEN 'unmatched'
         WHEN s.n_best = 1 THEN 'matched' ELSE 'ambiguous' END AS match_status,
    CASE WHEN s.sess_id IS NULL
            THEN 'no transcript starts within ' || tolerance_min
                 || ' min of the log and none names its sess_id'
         WHEN s.n_best = 1
            THEN concat_ws('; ', 'start Δt ' || s.best_delta || ' min',
                           CASE WHEN s.best_project THEN 'same project' END,
                           CASE WHEN s.best_named THEN 'sess_id named in a file path' END)
         ELSE s.n_best || ' candidates with equal evidence' END AS evidence,
    CASE WHEN s.n_best = 1 THEN s.best_delta END AS delta_min,
    coalesce(s.candidates, []) AS candidates
FROM logs l
LEFT JOIN summary s USING (sess_id);
