-- What each journal problem cost its ticket (SPEC §6.7): a warning (loaded, a default read
-- where a rule needs the value), one event dropped, or the ticket not replayable.
CREATE TABLE IF NOT EXISTS circuit_problems (
    source_file VARCHAR NOT NULL,
    line        BIGINT,
    ticket      VARCHAR NOT NULL,
    event       VARCHAR,
    effect      VARCHAR NOT NULL,
    reason      VARCHAR NOT NULL
);
