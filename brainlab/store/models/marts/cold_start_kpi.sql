CREATE OR REPLACE VIEW cold_start_kpi AS SELECT * FROM cold_start_kpi_for();

-- weekly_health (one row per ISO week) is weekly_health_for() with SPEC defaults (marts/weekly_health.sql).
