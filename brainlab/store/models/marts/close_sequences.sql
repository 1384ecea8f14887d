-- close_sequences_of over brain_session_calls (the macro holds the SQL and its comments).
CREATE OR REPLACE VIEW close_sequences AS
SELECT * FROM close_sequences_of(calls := brain_session_calls);
