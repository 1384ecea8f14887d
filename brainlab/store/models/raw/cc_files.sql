-- One row per transcript file: how far it has been read (incremental tail reads).
CREATE TABLE IF NOT EXISTS cc_files (
    source_file   VARCHAR PRIMARY KEY,
    layout        VARCHAR,   -- main | subagent | project-agent
    bytes_done    BIGINT NOT NULL,  -- byte offset just after the last complete line read
    lines_done    BIGINT NOT NULL,  -- lines read so far (next line number = lines_done + 1)
    pending_bytes BIGINT NOT NULL,  -- bytes of an unfinished last line left for the next run
    head_sha256   VARCHAR,   -- hash of the first bytes: a rewritten file is read again
    size_seen     BIGINT,
    runs          INTEGER,   -- how many ingest runs read something from this file
    rows_loaded   BIGINT,    -- usage lines (cc_request_lines) the file has contributed
    errors        BIGINT,    -- error and warning rows it has produced
    tail_sha256   VARCHAR,   -- hash of the last 4 KiB read: a file rewritten past it is read again
    mtime_ns      BIGINT,    -- modification time when read: a same-size rewrite is read again
    gone_at       TIMESTAMP  -- UTC time of the first run that did not find it (rows kept); NULL while on disk
);
