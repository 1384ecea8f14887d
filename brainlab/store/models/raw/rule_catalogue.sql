-- A lookup table: emptied and filled from the `rule:` entry of each models/rules/<rule>.yml
-- at every set-up (store/schema.py::_write_lookups); derived, so an upgrade drops it.
CREATE OR REPLACE TABLE rule_catalogue (
    rule VARCHAR PRIMARY KEY,
    name VARCHAR,
    spec VARCHAR,
    seed VARCHAR,
    subject_kind VARCHAR,
    severity VARCHAR,
    checks VARCHAR,
    evidence VARCHAR
);
