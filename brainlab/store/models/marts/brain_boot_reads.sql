-- brain_boot_reads_of over brain_session_calls (the macro holds the SQL and its comments).
CREATE OR REPLACE VIEW brain_boot_reads AS
SELECT * FROM brain_boot_reads_of(calls := brain_session_calls);
