-- mode_perimeter_breaches_of over brain_transcripts (the macro holds the SQL and its comments).
CREATE OR REPLACE VIEW mode_perimeter_breaches AS
SELECT * FROM mode_perimeter_breaches_of(transcripts := brain_transcripts);
