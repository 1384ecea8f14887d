"""Hostile and odd transcript input (issue 10; issue 12 item 6): a row or an error row each.

Every case here aborted or corrupted a run before: the rest of the run must load, and the
odd line must be an error or warning row with its file and line.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from claude_factory import assistant, usage, user, write
from click.testing import CliRunner

from brainlab.cli import main
from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

S = "sess-hostile"


def good(i, out=1, **kw):
    return assistant(S, f"2026-05-01T08:{i:02d}:00.000Z", f"m{i}", f"r{i}", usage(1, out), **kw)


def raw(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def errors_by_line(con, name=None):
    rows = con.execute("SELECT file, line, severity, reason FROM ingest_errors").fetchall()
    return {(r[0].rsplit("/", 1)[-1], r[1]): (r[2], r[3]) for r in rows
            if name is None or r[0].endswith(name)}


def requests(con):
    return {r[0]: r[1:] for r in con.execute(
        "SELECT message_id, input_tokens, output_tokens, cache_read_tokens, ts, model"
        " FROM cc_request_lines").fetchall()}


def test_impossible_timestamps_and_huge_counts_are_warnings_not_failed_commits(tmp_path):
    """Issue 10 item 2: DuckDB refused these at commit, and the whole run was lost."""
    bad_day = good(1)
    bad_day["timestamp"] = "2026-02-30T10:00:00Z"
    bad_month = good(2)
    bad_month["timestamp"] = "2026-13-45T10:00:00.000Z"
    huge_int = raw(good(3)).replace(b'"output_tokens":1', b'"output_tokens":9223372036854775808')
    huge_float = raw(good(4)).replace(b'"output_tokens":1', b'"output_tokens":1e25')
    bigger = raw(good(5)).replace(b'"output_tokens":1', b'"output_tokens":99999999999999999999999')
    write(tmp_path / "projects" / "p" / f"{S}.jsonl",
          [good(0), bad_day, bad_month, huge_int, huge_float, bigger, good(6)])
    write(tmp_path / "projects" / "p" / "other.jsonl", [good(7)])
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, tmp_path)
    got = requests(con)
    assert set(got) == {f"m{i}" for i in range(8)}  # every line loads, the other file too
    assert got["m1"][3] is None and got["m2"][3] is None  # impossible dates: NULL
    assert [got[f"m{i}"][1] for i in (3, 4, 5)] == [None, None, None]  # counts past BIGINT
    errors = errors_by_line(con, f"{S}.jsonl")
    assert {line for _, line in errors} == {2, 3, 4, 5, 6}
    # impossible dates are warnings; counts past the range are errors (issue 47 item 1)
    assert {line: sev for (_, line), (sev, _) in errors.items()} == {
        2: "warning", 3: "warning", 4: "error", 5: "error", 6: "error"}
    assert "timestamp" in errors[(f"{S}.jsonl", 2)][1]
    assert "output_tokens" in errors[(f"{S}.jsonl", 6)][1]


def test_odd_values_are_warnings_with_the_value_kept_when_unambiguous(tmp_path):
    """Issue 10 item 11: no silent 0, no silent drop; a byte-order mark is accepted."""
    as_text = raw(good(1)).replace(b'"output_tokens":1', b'"output_tokens":"12"')
    fraction = raw(good(2)).replace(b'"output_tokens":1', b'"output_tokens":1.5')
    negative = raw(good(3)).replace(b'"output_tokens":1', b'"output_tokens":-7')
    future = good(4)
    future["timestamp"] = "2031-05-01T08:00:00.000Z"
    odd_type = {"type": ["assistant"], "sessionId": S}
    message_text = {"type": "assistant", "sessionId": S, "message": "hello"}
    usage_list = good(7)
    usage_list["message"]["usage"] = [1, 2]
    user_text = {"type": "user", "sessionId": S, "message": "hello"}
    path = write(tmp_path / "projects" / "p" / f"{S}.jsonl", [
        b"\xef\xbb\xbf" + raw(good(0)), as_text, fraction, negative, future, odd_type,
        message_text, usage_list, user_text, good(9)])
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, tmp_path)
    got = requests(con)
    assert got["m0"][:2] == (1, 1)  # the BOM line loads
    assert got["m1"][1] == 12  # "12" kept
    assert got["m2"][1] is None and got["m3"][1] is None  # 1.5 and -7: NULL, not 0
    # a timestamp years ahead is outside spec/ranges.py's window: not stored (issue 47 item 1)
    assert got["m4"][3] is None
    errors = errors_by_line(con)
    lines = {line for (_, line) in errors}
    assert lines == {2, 3, 4, 5, 6, 7, 8, 9}, errors
    # out of range (1.5, -7, the year 2031) are errors, the rest warnings
    assert {line for (line,) in con.execute("SELECT line FROM ingest_errors"
                                            " WHERE severity = 'error'").fetchall()} == {3, 4, 5}
    assert con.execute("SELECT lines_done FROM cc_files WHERE source_file = ?",
                       [str(path)]).fetchone() == (10,)


def test_deeply_nested_line_is_one_error_row_and_not_retried(tmp_path):
    """Issue 10 item 9: a 5,000-level line skipped the whole file, and every run again."""
    deep = b'{"type":"user","sessionId":"' + S.encode() + b'","x":' + b"[" * 5000 + b"]" * 5000 + b"}"
    deep_msg = (b'{"type":"assistant","sessionId":"' + S.encode() + b'","message":{"content":'
                + b"[" * 5000 + b"]" * 5000 + b"}}")
    write(tmp_path / "projects" / "p" / f"{S}.jsonl", [good(0), deep, deep_msg, good(1)])
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, tmp_path)
    assert set(requests(con)) == {"m0", "m1"}
    errors = errors_by_line(con)
    assert set(errors) == {(f"{S}.jsonl", 2), (f"{S}.jsonl", 3)}
    again = ingest_claude(con, tmp_path)
    assert (again.read, again.unchanged) == (0, 1)


def test_line_without_model_loads_and_the_cli_exits_cleanly(tmp_path):
    """Issue 12 item 6 / issue 10 item 8: no TypeError, no markup read from data."""
    no_model = good(1)
    del no_model["message"]["model"]
    write(tmp_path / "projects" / "p" / f"{S}.jsonl", [
        good(0), no_model, good(2, model="claude-[/x]"),
        good(3, model="[link=https://evil.example]click[/link]"), good(4, model="[bold]b")])
    db = tmp_path / "b.duckdb"
    result = CliRunner().invoke(main, ["ingest", "claude", str(tmp_path), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert "(no model)" in result.output and "claude-[/x]" in result.output
    assert "[link=https://evil.example]click[/link]" in result.output  # printed as text
    assert "[bold]b" in result.output
    con = open_writer(db)
    assert con.execute("SELECT unpriced_requests FROM usage_daily").fetchone() == (4,)


def test_ingest_prints_the_daily_or_weekly_table_in_the_same_run(tmp_path):
    """Issue 12 item 4: ccusage's one-command habit."""
    write(tmp_path / "projects" / "p" / f"{S}.jsonl", [good(0, out=40), good(1, out=2)])
    db = tmp_path / "b.duckdb"
    runner = CliRunner()
    daily = runner.invoke(main, ["ingest", "claude", str(tmp_path), "--db", str(db), "--daily"])
    assert daily.exit_code == 0, daily.output
    alone = runner.invoke(main, ["usage", "daily", "--db", str(db)])
    assert alone.output.strip() and alone.output in daily.output
    weekly = runner.invoke(main, ["ingest", "claude", str(tmp_path), "--db", str(db), "--weekly"])
    assert runner.invoke(main, ["usage", "weekly", "--db", str(db)]).output in weekly.output
    plain = runner.invoke(main, ["ingest", "claude", str(tmp_path), "--db", str(db)])
    assert alone.output not in plain.output


def test_an_empty_folder_says_where_transcripts_are(tmp_path):
    """A folder holding no transcript gives a store with nothing in it: say so, and where
    Claude Code keeps them, instead of a bare '0 read'; a folder with one says nothing."""
    (tmp_path / "empty").mkdir()
    db = tmp_path / "b.duckdb"
    runner = CliRunner()
    empty = runner.invoke(main, ["ingest", "claude", str(tmp_path / "empty"), "--db", str(db)])
    assert empty.exit_code == 0, empty.output
    assert f"No transcript (*.jsonl) under {tmp_path / 'empty'}" in empty.output
    assert "~/.claude/projects" in empty.output
    write(tmp_path / "full" / "p" / f"{S}.jsonl", [good(0)])
    full = runner.invoke(main, ["ingest", "claude", str(tmp_path / "full"), "--db", str(db)])
    assert full.exit_code == 0 and "No transcript" not in full.output, full.output
    again = runner.invoke(main, ["ingest", "claude", str(tmp_path / "full"), "--db", str(db)])
    assert "No transcript" not in again.output  # nothing new is not nothing there


def tree_with_odd_files(root):
    proj = root / "projects" / "p"
    write(proj / f"{S}.jsonl", [good(0)])
    write(root / "elsewhere" / "outside.jsonl", [good(9)])
    (proj / "dir.jsonl").mkdir()
    (proj / "dangling.jsonl").symlink_to(proj / "nowhere.jsonl")
    (proj / "loop.jsonl").symlink_to(proj / "loop.jsonl")
    (proj / "escape.jsonl").symlink_to(root / "elsewhere" / "outside.jsonl")
    (proj / "twin.jsonl").symlink_to(proj / f"{S}.jsonl")
    os.mkfifo(proj / "fifo.jsonl")
    return proj


def test_odd_files_are_error_rows_and_only_regular_files_are_read(tmp_path):
    """Issue 10 items 4-6: no traceback, no hang on a FIFO, nothing read outside the root."""
    proj = tree_with_odd_files(tmp_path)
    con = open_writer(tmp_path / "b.duckdb")
    summary = ingest_claude(con, tmp_path)
    assert summary.read == 1  # the twin symlink is the same file: read once
    assert set(requests(con)) == {"m0"}  # nothing from outside the root
    errors = errors_by_line(con)
    assert set(errors) == {(n, None) for n in (
        "dir.jsonl", "dangling.jsonl", "loop.jsonl", "escape.jsonl", "fifo.jsonl")}
    reasons = " | ".join(r for _, r in errors.values())
    for word in ("directory", "dangling", "loop", "outside", "regular"):
        assert word in reasons
    again = ingest_claude(con, tmp_path)  # the same problems are not stacked run after run
    assert again.read == 0 and len(errors_by_line(con)) == 5
    assert proj.exists()


UNREADABLE = """
import json, sys
from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude
con = open_writer(sys.argv[1] + "/b.duckdb")
ingest_claude(con, sys.argv[1])
print(json.dumps({"ids": [r[0] for r in con.execute("SELECT message_id FROM cc_request_lines")
                  .fetchall()], "errors": con.execute("SELECT file, reason FROM ingest_errors")
                  .fetchall()}))
"""


@pytest.mark.skipif(os.geteuid() == 0 and not shutil.which("setpriv"),
                    reason="as root, needs setpriv to run as an unprivileged user")
def test_unreadable_file_is_an_error_row():
    """Issue 10 item 4, as a user without read permission (root reads everything)."""
    base = Path(tempfile.mkdtemp(prefix="brainlab-unreadable-"))
    try:
        base.chmod(0o777)
        proj = base / "projects" / "p"
        write(proj / f"{S}.jsonl", [good(0)])
        locked = write(proj / "locked.jsonl", [good(1)])
        for folder in (base / "projects", proj):
            folder.chmod(0o777)
        locked.chmod(0)
        command = [sys.executable, "-c", UNREADABLE, str(base)]
        if os.geteuid() == 0:
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                       *command]
        env = dict(os.environ, HOME=str(base))
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout.strip().splitlines()[-1])
        assert got["ids"] == ["m0"]
        assert [(f.rsplit("/", 1)[-1], "permission" in r) for f, r in got["errors"]] == [
            ("locked.jsonl", True)]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_every_kept_string_is_redacted_whatever_the_field(tmp_path):
    """Issue 10 item 13: the compaction trigger, ids, speed, types went in unredacted."""
    token = "xoxb-" + "1234567890-abcdefghijklmnop"
    compact = {"type": "system", "subtype": "compact_boundary", "sessionId": S,
               "timestamp": "2026-05-01T09:00:00.000Z",
               "compactMetadata": {"trigger": f"auto {token}", "preTokens": 10}}
    line = good(1)
    line["requestId"] = f"req {token}"
    line["message"]["usage"]["speed"] = token
    result = user(S, "2026-05-01T09:01:00.000Z", results=[(f"tool {token}", "out")],
                  tool_use_result={"agentId": f"ag {token}", "agentType": token})
    write(tmp_path / "projects" / "p" / f"{S}.jsonl",
          [good(0), compact, line, result, {"type": token, "sessionId": S}])
    con = open_writer(tmp_path / "b.duckdb")
    ingest_claude(con, tmp_path)
    assert con.execute("SELECT trigger FROM cc_compactions").fetchone()[0].startswith("auto ")
    assert con.execute("SELECT count(*) FROM cc_tool_results").fetchone() == (1,)
    tables = [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
    ).fetchall()]
    for table in tables:
        assert "xoxb-" not in repr(con.execute(f'SELECT * FROM "{table}"').fetchall()), table
