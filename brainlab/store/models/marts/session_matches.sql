CREATE OR REPLACE VIEW session_matches AS SELECT * FROM session_matches_for();
