-- SPEC §3.3 cold-start KPI: sessions with handoff_level NO and a measured pass; pass rate
-- over the last `window` such sessions (inclusive); >= stable: stable, >= watch: watch,
-- else: enrich the constitution.
CREATE OR REPLACE MACRO cold_start_kpi_for(  -- defaults: brainlab/spec/thresholds.py
    window_size := {{ thresholds.cold_start_window }},
    stable := {{ thresholds.cold_start_stable }},
    watch := {{ thresholds.cold_start_watch }}) AS TABLE
WITH m AS (
    SELECT sess_id, started_at, cold_start_kpi_pass,
           row_number() OVER (ORDER BY started_at, sess_id) AS k
    FROM metabolism_sessions
    WHERE upper(handoff_level) = 'NO' AND cold_start_kpi_pass IS NOT NULL
), rates AS (
    SELECT cur.sess_id, cur.started_at, cur.cold_start_kpi_pass,
        count(*) AS measured,
        count(*) FILTER (WHERE p.cold_start_kpi_pass) AS passes
    FROM m cur JOIN m p ON p.k <= cur.k AND p.k > cur.k - window_size
    GROUP BY cur.sess_id, cur.started_at, cur.cold_start_kpi_pass
)
SELECT *, passes / measured AS pass_rate,
    CASE WHEN passes / measured >= stable THEN 'stable'
         WHEN passes / measured >= watch THEN 'watch'
         ELSE 'enrich-constitution' END AS status
FROM rates;
