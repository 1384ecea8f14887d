"""SPEC §3.1: every metabolism log variant, parsed through a real ingest into DuckDB."""

import pandas as pd
from conftest import ingest_brain, write

from brainlab.store import query

TEMPLATE_LOG = """
# Metabolism — 2026-03-15 — sess-20260315-1105-brain

| Clé | Valeur |
|-----|--------|
| type | build-brain |
| mode | prod |
| tokens_used | 45k |
| context_peak | 31% |
| context_at_close | 22% |
| duration_min | 95 |
| commits | 3 |
| todos_closed | 2 |
| saturation_flag | false |
| handoff_level | SEMI+ |
| cold_start_kpi_pass | N/A |
| **health_score** | **2.51** |

## Agents chargés
| Agent | Tokens estimés |
|-------|---------------|
| helloWorld | ~8.4k |
| coach | ~3.7k |
| total | ~12k tokens (6% budget) |

## Signaux

## Notes
first note line
"""


def log_row(db, sess_id):
    frame = query(db, "SELECT * FROM raw_metabolism_logs WHERE sess_id = ?", [sess_id])
    assert len(frame) == 1, frame
    return frame.iloc[0]


def test_template_log_all_fields(brain, db):
    write(brain, "progression/metabolism/2026-03-15-sess-20260315-1105-brain.md", TEMPLATE_LOG)
    ingest_brain(brain, db)
    row = log_row(db, "sess-20260315-1105-brain")
    assert row.tokens_used == 45000
    assert row.context_peak_pct == 31 and row.context_at_close == 22
    assert row.duration_min == 95 and row.commits == 3 and row.todos_closed == 2
    assert not row.saturation_flag and not pd.isna(row.saturation_flag)
    assert row.handoff_level == "SEMI+"
    assert pd.isna(row.cold_start_kpi_pass)
    assert row.health_score == 2.51
    assert row.log_version == "v2" and row.log_format == "table"
    assert not row.is_incomplete
    assert str(row.started_at) == "2026-03-15 11:05:00"
    agents = query(db, "SELECT agent, tokens_logged FROM raw_agent_loads ORDER BY agent")
    assert agents.values.tolist() == [["coach", 3700], ["helloWorld", 8400]]
    assert query(db, "SELECT count(*) AS n FROM ingest_errors").n[0] == 0


def test_bold_keys_markers_and_v1(brain, db):
    write(brain, "progression/metabolism/2026-01-02-sess-20260102-0900-work.md", """
        # Metabolism — 2026-01-02 — sess-20260102-0900-work

        | Clé | Valeur |
        |-----|--------|
        | **type** | **work** |
        | **tokens_used** | **120k** |
        | **context_peak** | **<non mesuré>** |
        | context_at_close | N/A |
        | duration_min | 30 |
        | commits | 0 |
        | todos_closed | 1 |
        | **health_score** | **<insuffisant>** |
        """)
    ingest_brain(brain, db)
    row = log_row(db, "sess-20260102-0900-work")
    assert row.type == "work" and row.tokens_used == 120000
    assert pd.isna(row.context_peak_pct)
    assert pd.isna(row.context_at_close)
    assert pd.isna(row.health_score)
    assert row.log_version == "v1"  # no handoff_level / cold_start_kpi_pass rows
    assert not row.is_incomplete  # explicit "not measured" is a value, not a missing key


def test_key_value_lines_and_yaml_agents(brain, db):
    write(brain, "progression/metabolism/2026-02-01-sess-20260201-1400-explore.md", """
        # Metabolism — 2026-02-01 — sess-20260201-1400-explore

        session_id            : sess-20260201-1400-explore
        type                  : explore
        tokens_used           : 1.2M
        context_peak_pct      : 44
        context_at_close      : 30%
        duration_min          : 240
        commits               : 0
        handoff_level         : NO
        cold_start_kpi_pass   : true
        health_score          : 0.18
        agents_loaded:
          - session-orchestrator : ~3.7k tokens
          - helloWorld           : ~8k tokens
        total_context_agents     : ~12k tokens  (6% du budget total)
        """)
    ingest_brain(brain, db)
    row = log_row(db, "sess-20260201-1400-explore")
    assert row.log_format == "key-value"
    assert row.tokens_used == 1_200_000 and row.context_peak_pct == 44
    assert bool(row.cold_start_kpi_pass) is True and row.handoff_level == "NO"
    agents = query(db, "SELECT agent, tokens_logged FROM raw_agent_loads ORDER BY agent")
    assert agents.values.tolist() == [["helloWorld", 8000], ["session-orchestrator", 3700]]


def test_missing_mandatory_field_loads_flagged(brain, db):
    text = TEMPLATE_LOG.replace("| commits | 3 |\n", "").replace("| duration_min | 95 |\n", "")
    write(brain, "progression/metabolism/2026-03-15-sess-20260315-1105-brain.md", text)
    ingest_brain(brain, db)
    row = log_row(db, "sess-20260315-1105-brain")
    assert row.is_incomplete
    assert list(row.missing_fields) == ["duration_min", "commits"]
    assert row.tokens_used == 45000  # the other fields still load
    errors = query(db, "SELECT severity, reason FROM ingest_errors")
    assert len(errors) == 1 and errors.severity[0] == "warning"
    assert "duration_min, commits" in errors.reason[0]


def test_unparseable_value_and_truncated_row_name_the_line(brain, db):
    text = TEMPLATE_LOG.replace("| tokens_used | 45k |", "| tokens_used | lots |")
    text = text.replace("| duration_min | 95 |", "| duration_min |")
    path = write(brain, "progression/metabolism/2026-03-15-sess-20260315-1105-brain.md", text)
    ingest_brain(brain, db)
    row = log_row(db, "sess-20260315-1105-brain")
    assert pd.isna(row.tokens_used) and row.commits == 3
    errors = query(db, "SELECT file, line, reason FROM ingest_errors ORDER BY line NULLS LAST")
    lines = path.read_text().splitlines()
    by_reason = {r.reason.split(":")[0]: r for r in errors.itertuples()}
    assert "tokens_used" in by_reason and "truncated table row (1 cell(s))" in by_reason
    assert lines[int(by_reason["tokens_used"].line) - 1].startswith("| tokens_used | lots")
    assert lines[int(by_reason["truncated table row (1 cell(s))"].line) - 1] == "| duration_min |"
    assert errors.file.eq(str(path.resolve())).all()


def test_invalid_utf8_and_binary_files(brain, db):
    good = TEMPLATE_LOG.encode()
    broken = good.replace(b"first note line", b"caf\xe9 note")
    write(brain, "progression/metabolism/2026-03-15-sess-20260315-1105-brain.md", broken)
    write(brain, "progression/metabolism/2026-03-16-sess-20260316-1000-work.md",
          b"\x89PNG\r\n\x1a\n\x00\x00binary")
    write(brain, "progression/metabolism/2026-03-17-sess-20260317-1000-brain.md",
          TEMPLATE_LOG.replace("20260315-1105", "20260317-1000"))
    summary = ingest_brain(brain, db)
    assert (summary.errors["metabolism"], summary.warnings["metabolism"]) == (1, 1)
    assert len(query(db, "SELECT * FROM raw_metabolism_logs")) == 2  # broken UTF-8 still loads
    errors = query(db, "SELECT file, line, reason FROM ingest_errors ORDER BY file")
    expected_line = TEMPLATE_LOG.splitlines().index("first note line") + 1  # raw bytes written
    assert "invalid UTF-8" in errors.reason[0] and errors.line[0] == expected_line
    assert "binary file" in errors.reason[1]


def test_index_readme(brain, db):
    write(brain, "progression/metabolism/README.md", """
        # progression/metabolism/ — Index

        | Date | Session | Type | Mode | health_score | handoff | kpi | Seuils |
        |------|---------|------|------|-------------|---------|-----|--------|
        | 2026-03-15 | sess-20260315-1105-brain | build-brain | prod | 2.51 | SEMI+ | N/A | — |
        | 2026-03-16 | sess-20260316-0900-work | use-brain | prod | <insuffisant> | NO | true | — |
        | 2026-03-17 | sess-broken | use-brain |
        """)
    ingest_brain(brain, db)
    rows = query(db, "SELECT sess_id, health_score, cold_start_kpi_pass FROM raw_metabolism_index"
                     " ORDER BY sess_id")
    assert rows.sess_id.tolist() == ["sess-20260315-1105-brain", "sess-20260316-0900-work"]
    assert rows.health_score[0] == 2.51 and pd.isna(rows.health_score[1])
    errors = query(db, "SELECT line, reason FROM ingest_errors")
    assert errors.line.tolist() == [7] and "3 cells" in errors.reason[0]
