-- A lookup table: emptied and filled from brainlab/spec/modes.py BUDGETS
-- at every set-up (store/schema.py::_write_lookups); derived, so an upgrade drops it.
CREATE OR REPLACE TABLE mode_budgets (
    mode VARCHAR PRIMARY KEY,
    watch_pct DOUBLE,
    max_pct DOUBLE,
    min_commits INTEGER,
    source VARCHAR
);
