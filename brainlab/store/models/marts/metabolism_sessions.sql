-- Metabolism sessions with SPEC defaults (v2 health, saturation 80/85) on the 'best' basis
-- (measured where a transcript exists, else logged; issue 13): what every metabolism metric
-- reads. `sessions` sets logs and transcripts side by side instead.
CREATE OR REPLACE VIEW metabolism_sessions AS SELECT * FROM scored_sessions();
