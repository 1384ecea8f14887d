-- A lookup table: emptied and filled from brainlab/spec/session_types.py SESSION_TYPE_SETS
-- at every set-up (store/schema.py::_write_lookups); derived, so an upgrade drops it.
CREATE OR REPLACE TABLE session_type_sets (
    set_name VARCHAR,
    type VARCHAR,
    spec VARCHAR,
    PRIMARY KEY (set_name, type)
);
