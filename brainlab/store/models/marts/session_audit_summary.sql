-- Summary figures of the audit (issue 13 §3): per field, how many logs were compared, the
-- share within tolerance, and the median difference (measured - logged) and median relative
-- difference ((logged - measured) / measured: < 0 = the logs under-report).
CREATE OR REPLACE VIEW session_audit_summary AS
SELECT field,
    count(*) FILTER (WHERE disagrees IS NOT NULL) AS logs_compared,
    count(*) FILTER (WHERE NOT disagrees) AS within_tolerance,
    count(*) FILTER (WHERE NOT disagrees) / nullif(count(*) FILTER (WHERE disagrees IS NOT NULL), 0)
        AS share_within_tolerance,
    median(difference) AS median_difference,
    median((logged_value - measured_value) / nullif(measured_value, 0))
        AS median_relative_report
FROM session_audit
GROUP BY field;
