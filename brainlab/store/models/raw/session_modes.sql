-- A lookup table: emptied and filled from brainlab/spec/modes.py MODES
-- at every set-up (store/schema.py::_write_lookups); derived, so an upgrade drops it.
CREATE OR REPLACE TABLE session_modes (
    mode VARCHAR PRIMARY KEY,
    kind VARCHAR,
    mode_file VARCHAR,
    source VARCHAR
);
