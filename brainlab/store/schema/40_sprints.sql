-- Sprints as data (SPEC §4.5, §7): the planned agents of each sprint, the files each agent
-- referenced, and what the context broker recorded (SPEC §4.2 inhale, §4.3 expire).
-- Filled by brainlab/sources/sprints.py (JSONL sprint records), broker_blocks.py (the broker's
-- inhale/expire text blocks) and contracts.py (projets/<p>.md, SPEC §4.1).

-- One row per sprint and file that described it (a JSONL record file).
CREATE TABLE IF NOT EXISTS sprints (
    sprint_id   VARCHAR NOT NULL,
    project     VARCHAR,
    domain      VARCHAR,
    session_id  VARCHAR,
    started_at  TIMESTAMP,
    ended_at    TIMESTAMP,
    origin      VARCHAR NOT NULL,
    source_file VARCHAR NOT NULL,
    line        BIGINT
);

-- One row per sprint and planned agent (SPEC §4.2 agents_prévus).
CREATE TABLE IF NOT EXISTS sprint_agents (
    sprint_id   VARCHAR NOT NULL,
    agent       VARCHAR NOT NULL,
    domain      VARCHAR,
    open_todos  VARCHAR[],
    loaded      VARCHAR[],
    source_file VARCHAR NOT NULL,
    line        BIGINT
);

-- One row per sprint, agent, file and kind of reference (SPEC §4.4 "referenced").
CREATE TABLE IF NOT EXISTS sprint_refs (
    sprint_id   VARCHAR NOT NULL,
    agent       VARCHAR NOT NULL,
    path        VARCHAR NOT NULL,
    kind        VARCHAR NOT NULL,
    source_file VARCHAR NOT NULL,
    line        BIGINT
);

-- One row per file size a record gave (SPEC §2.5: tokens = bytes / 4).
CREATE TABLE IF NOT EXISTS file_sizes (
    project     VARCHAR NOT NULL,
    path        VARCHAR NOT NULL,
    bytes       BIGINT NOT NULL,
    source_file VARCHAR NOT NULL,
    line        BIGINT
);

-- One row per inhale or expire block the broker wrote (seeds/context-broker.md.txt formats).
CREATE TABLE IF NOT EXISTS broker_blocks (
    block_id     VARCHAR NOT NULL,
    kind         VARCHAR NOT NULL,
    sprint       VARCHAR NOT NULL,
    project      VARCHAR,
    mode         VARCHAR,
    reason       VARCHAR,
    context_load DOUBLE,
    stale_ratio  DOUBLE,
    breath_depth INTEGER,
    exhale_rate  DOUBLE,
    ts           TIMESTAMP,
    session_id   VARCHAR,
    agent_id     VARCHAR,
    source_file  VARCHAR NOT NULL,
    line         BIGINT
);

-- One row per file named in a block: loaded for an agent (source map), excluded, released
-- (libérer) or kept (garder); plus one 'agent' row (path NULL) per agent of a source map.
CREATE TABLE IF NOT EXISTS broker_block_files (
    block_id    VARCHAR NOT NULL,
    sprint      VARCHAR NOT NULL,
    agent       VARCHAR,
    path        VARCHAR,
    action      VARCHAR NOT NULL,
    reason      VARCHAR,
    source_file VARCHAR NOT NULL,
    line        BIGINT
);

-- One row per file of a declared project contract (SPEC §4.1).
CREATE TABLE IF NOT EXISTS project_contracts (
    project     VARCHAR NOT NULL,
    alias       VARCHAR,
    domain      VARCHAR NOT NULL,
    path        VARCHAR NOT NULL,
    position    INTEGER NOT NULL,
    source_file VARCHAR NOT NULL,
    line        BIGINT
);
