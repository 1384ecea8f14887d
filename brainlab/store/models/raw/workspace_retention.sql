-- A lookup table: emptied and filled from brainlab/spec/vocabulary.py WORKSPACE_RETENTION_DAYS
-- at every set-up (store/schema.py::_write_lookups); derived, so an upgrade drops it.
CREATE OR REPLACE TABLE workspace_retention (
    archive VARCHAR PRIMARY KEY,
    retention_days INTEGER NOT NULL
);
