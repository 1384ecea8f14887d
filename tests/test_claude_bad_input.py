"""Bad transcript input becomes error rows with file and line; nothing else is lost."""

import json

from claude_factory import assistant, usage, write

from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

S = "sess-bad"


def good(i, out=1):
    return assistant(S, f"2026-05-01T08:{i:02d}:00.000Z", f"m{i}", f"r{i}", usage(1, out))


def test_bad_lines_become_error_rows_and_good_lines_load(tmp_path):
    huge = assistant(S, "2026-05-01T08:30:00.000Z", "mBig", "rBig", usage(1, 1),
                     content=[{"type": "text", "text": "y" * 25_000_000}])
    bad_utf8 = json.dumps(good(5), separators=(",", ":")).encode().replace(b'"ok"', b'"o\xff"')
    path = write(tmp_path / "projects" / "p" / f"{S}.jsonl", [
        good(0),
        b'{"type":"assistant", "message": {broken',   # 2 invalid JSON
        good(1),
        b"[1, 2, 3]",                                  # 4 not an object
        bad_utf8,                                      # 5 invalid UTF-8, still loads
        {"type": "brand-new-kind", "sessionId": S},    # 6 unknown type: warning, ignored
        huge,                                          # 7 a 25 MB line
        b"",                                           # 8 blank line: nothing to say
        good(2),
    ])
    empty = tmp_path / "projects" / "p" / "empty.jsonl"
    empty.write_bytes(b"")
    con = open_writer(tmp_path / "b.duckdb")
    summary = ingest_claude(con, tmp_path)
    errors = con.execute("SELECT file, line, severity, reason FROM ingest_errors"
                         " ORDER BY file, line NULLS FIRST").fetchall()
    by_where = {(e[0].rsplit("/", 1)[-1], e[1]): e[2] for e in errors}
    assert by_where == {("empty.jsonl", None): "warning", (f"{S}.jsonl", 2): "error",
                        (f"{S}.jsonl", 4): "error", (f"{S}.jsonl", 5): "warning",
                        (f"{S}.jsonl", 6): "warning"}
    assert all(e[0] in (str(path), str(empty)) for e in errors)
    assert (summary.errors, summary.warnings) == (2, 3)  # counted apart (issue 11 item 10)
    loaded = [r[0] for r in con.execute(
        "SELECT message_id FROM cc_requests ORDER BY line").fetchall()]
    assert loaded == ["m0", "m1", "m5", "mBig", "m2"]
    assert con.execute("SELECT lines_done FROM cc_files WHERE source_file = ?",
                       [str(path)]).fetchone() == (9,)
