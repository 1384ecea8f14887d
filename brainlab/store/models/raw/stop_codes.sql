-- A lookup table: emptied and filled from brainlab/spec/stops.py STOP_CODES
-- at every set-up (store/schema.py::_write_lookups); derived, so an upgrade drops it.
CREATE OR REPLACE TABLE stop_codes (
    name VARCHAR PRIMARY KEY,
    code INTEGER
);
