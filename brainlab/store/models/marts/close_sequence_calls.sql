-- close_sequence_calls_of over brain_session_calls (the macro holds the SQL and its comments).
CREATE OR REPLACE VIEW close_sequence_calls AS
SELECT * FROM close_sequence_calls_of(calls := brain_session_calls);
