-- brain_session_phases_of over brain_session_calls (the macro holds the SQL and its comments).
CREATE OR REPLACE VIEW brain_session_phases AS
SELECT * FROM brain_session_phases_of(calls := brain_session_calls);
