-- Whether the stored change points (raw/trend_change_scan.sql) are those of the store as it
-- is (issue 43; brainlab/store/trend_scan.py): every writer of the scan's inputs counts its
-- write in brainlab_meta 'trend_inputs' before its rows commit, and the scan stores, with its
-- rows, the count it read before it started ('trend_change_scan'). Equal: current. One row.
CREATE OR REPLACE VIEW trend_changes_status AS
WITH counts AS (
    SELECT coalesce(max(TRY_CAST(value AS BIGINT)) FILTER (WHERE key = 'trend_inputs'), 0)
               AS inputs,
           max(TRY_CAST(value AS BIGINT)) FILTER (WHERE key = 'trend_change_scan') AS seen
    FROM brainlab_meta WHERE key IN ('trend_inputs', 'trend_change_scan')
), scan AS (
    SELECT count(*) AS changes, max(scanned_at) AS scanned_at FROM trend_change_scan
), judged AS (
    SELECT CASE WHEN seen = inputs THEN 'current'
                WHEN seen IS NULL AND changes = 0 THEN 'not scanned'
                ELSE 'stale' END AS state, scanned_at, changes
    FROM counts, scan
)
SELECT state, scanned_at, changes,
       CASE state
           WHEN 'current' THEN 'current: the change points of the store as it is'
           WHEN 'stale' THEN 'stale: the store changed after the last scan (ingest claude,'
               || ' ingest otel, a live hook or new prices); trend_changes shows no row until'
               || ' `brainlab trends --refresh` or the next `brainlab ingest brain` rescans'
           ELSE 'not scanned: no change points stored yet; run `brainlab trends --refresh`'
       END AS message
FROM judged;
