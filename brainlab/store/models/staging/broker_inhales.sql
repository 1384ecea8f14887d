-- Sprint replay inputs (SPEC §4.5): what the broker recorded, the contracts (declared or
-- inferred, SPEC §4.1), and one row per sprint and planned agent ready for replay.

-- SPEC §4.2: the last inhale block written for each sprint name (a re-plan replaces the map).
CREATE OR REPLACE VIEW broker_inhales AS
SELECT * FROM broker_blocks
WHERE kind = 'inhale'
QUALIFY row_number() OVER (PARTITION BY sprint
                           ORDER BY ts DESC NULLS LAST, source_file DESC, line DESC) = 1;
