-- A lookup table: emptied and filled from brainlab/spec/modes.py PERIMETERS
-- at every set-up (store/schema.py::_write_lookups); derived, so an upgrade drops it.
CREATE OR REPLACE TABLE mode_perimeters (
    mode VARCHAR,
    action VARCHAR,
    refused VARCHAR,
    allowed VARCHAR,
    source VARCHAR
);
