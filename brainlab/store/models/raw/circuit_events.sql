-- Ticket circuit journals, one row per event as parsed (SPEC §6.7). A bad line costs its own
-- event only; what it cost the ticket is in circuit_problems.
CREATE TABLE IF NOT EXISTS circuit_events (
    source_file VARCHAR NOT NULL,
    line        BIGINT NOT NULL,
    ticket      VARCHAR NOT NULL,
    event_at    TIMESTAMP NOT NULL,
    event       VARCHAR NOT NULL,
    step        VARCHAR,
    component   VARCHAR,
    name        VARCHAR,
    code        INTEGER,
    stop_kind   VARCHAR,
    facts       VARCHAR,
    decided_by  VARCHAR,
    kind        VARCHAR,
    depuis      VARCHAR,
    new_fact    BOOLEAN,
    accepted    BOOLEAN,
    reason      VARCHAR,
    verdict     VARCHAR,
    agent       VARCHAR,
    tokens      BIGINT,
    questioned  BOOLEAN,
    outcome     VARCHAR,
    extra       VARCHAR
);
