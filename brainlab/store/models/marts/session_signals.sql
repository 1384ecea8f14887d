CREATE OR REPLACE VIEW session_signals AS SELECT * FROM session_signals_for();
