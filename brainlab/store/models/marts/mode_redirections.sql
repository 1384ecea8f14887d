-- SPEC §2.7 "Measurable": mode_redirections_for() over every brain session (marts/mode_redirections_for.sql).
CREATE OR REPLACE VIEW mode_redirections AS SELECT * FROM mode_redirections_for();
