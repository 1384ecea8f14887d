-- One row per ISO week with sessions, SPEC thresholds: the headline figures the demo prints.
CREATE OR REPLACE VIEW weekly_health AS
SELECT * EXCLUDE (last_ratio, last_ratio_band) FROM weekly_health_for();
