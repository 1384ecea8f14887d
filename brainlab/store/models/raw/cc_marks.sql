-- Metabolism facts a transcript gives beyond usage (issue 13, sources/claude_marks.py):
-- prompt keywords (SPEC §2.7), to-do items and statuses, workspace decision lines; no text.
CREATE TABLE IF NOT EXISTS cc_marks (
    session_id   VARCHAR,
    agent_id     VARCHAR,
    ts           TIMESTAMP,
    kind         VARCHAR,   -- prompt | todo | decisions
    keyword_type VARCHAR,
    keyword_mode VARCHAR,
    keyword_rule VARCHAR,
    item_key     VARCHAR,
    item_status  VARCHAR,
    lines        INTEGER,
    tool_use_id  VARCHAR,
    source_file  VARCHAR NOT NULL,
    line         BIGINT
);
