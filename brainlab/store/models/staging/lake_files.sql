-- Each transcript's user and machine on a store attached to a team lake (`brainlab attach`
-- replaces this view by one over the lake's cc_files partitions, brainlab/lake/attach.py);
-- a local store holds no partition, so the view is empty and usage_calls' user and machine
-- are NULL (or the telemetry's user).
CREATE OR REPLACE VIEW lake_files AS
SELECT NULL::VARCHAR AS source_file, NULL::VARCHAR AS "user", NULL::VARCHAR AS machine
WHERE false;
