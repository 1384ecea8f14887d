CREATE OR REPLACE VIEW stale_claims AS
SELECT * FROM claim_status_at(CAST(current_timestamp AS TIMESTAMP)) WHERE is_stale;
