-- SPEC §4.3: the last expire block written for each sprint name.
CREATE OR REPLACE VIEW broker_expires AS
SELECT * FROM broker_blocks
WHERE kind = 'expire'
QUALIFY row_number() OVER (PARTITION BY sprint
                           ORDER BY ts DESC NULLS LAST, source_file DESC, line DESC) = 1;
