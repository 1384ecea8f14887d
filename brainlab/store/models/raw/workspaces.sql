-- SPEC §5 workspaces
CREATE TABLE IF NOT EXISTS workspaces (
    source_file  VARCHAR NOT NULL,
    workspace    VARCHAR NOT NULL,
    project      VARCHAR,
    sprint       VARCHAR,
    readme_lines INTEGER,
    ttl          VARCHAR,
    archive      VARCHAR,
    mode         VARCHAR
);
