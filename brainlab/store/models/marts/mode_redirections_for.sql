-- SPEC §2.7 "Measurable": redirections (the soft lock refusing and sending the work to a
-- dedicated session, ADR-019:84) per declared mode, and the share of brain sessions that
-- declare a mode. One row per mode ('(none)': brain sessions without a mode). until: only the
-- sessions whose first prompt came before it (a past week's report, issue 43); NULL: all.
CREATE OR REPLACE MACRO mode_redirections_for(until := NULL) AS TABLE
WITH redirects AS (
    SELECT session_id, count(*) AS redirections,
           list(DISTINCT item_key ORDER BY item_key) AS phrases
    FROM cc_marks WHERE kind = 'redirect' AND agent_id IS NULL GROUP BY session_id
), sessions AS (
    SELECT coalesce(b.declared_mode, '(none)') AS mode, b.session_id,
           coalesce(r.redirections, 0) AS redirections, coalesce(r.phrases, []) AS phrases
    FROM brain_transcripts b LEFT JOIN redirects r USING (session_id)
    WHERE until IS NULL OR b.first_prompt_at < CAST(until AS TIMESTAMP)
)
SELECT mode, m.kind AS mode_kind, count(*) AS sessions,
       round(count(*) / sum(count(*)) OVER (), 3) AS session_share,
       CAST(sum(redirections) AS BIGINT) AS redirections,
       count(*) FILTER (WHERE redirections > 0) AS sessions_redirecting,
       round(sum(redirections) / count(*), 2) AS redirections_per_session,
       list_sort(list_distinct(flatten(list(phrases)))) AS phrases
FROM sessions LEFT JOIN session_modes m USING (mode)
GROUP BY mode, m.kind;
