CREATE OR REPLACE VIEW weekly_category_health AS SELECT * FROM weekly_category_health_for();
