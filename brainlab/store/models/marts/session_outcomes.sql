CREATE OR REPLACE VIEW session_outcomes AS SELECT * FROM session_outcomes_for();
