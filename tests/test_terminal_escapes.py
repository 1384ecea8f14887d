"""Issue 29 (Injection 2 and 4): strings from data reach a terminal as plain text.

A transcript whose model, project and command hold ESC sequences (clear screen, OSC-8
hyperlink), a C1 CSI (U+009B), U+2028 and rich markup (`[link=...]`, `claude-[/x]`) is
ingested; every read command then runs through the real CLI on a pseudo-terminal (the pty
module), where rich styles its own output. No command may crash (MarkupError) or pass a
control sequence from the data; the data's text is shown with its escapes made visible.
`check` prints a hostile file name the same way in text and escapes U+009B and U+2028 in JSON
and SARIF, whose URIs are percent-encoded; a run past 25,000 results is capped with a note.
"""

import json
import os
import pty
import re
import select
import subprocess
import sys

import pytest
from claude_factory import assistant, tool_use, usage, user, write
from conftest import cli_env
from conftest import write as write_brain

from brainlab.common.plaintext import json_safe, visible

HOSTILE = "claude-\x1b[2J\x1b]8;;https://evil.example/\x07x\x1b]8;;\x07[/x][link=https://e.x]L\x9b31mZ\u2028"
PROJECT = "/home/u/p\x1b[2Jroj[/b]"
COMMAND = "echo \x1b]0;owned\x07 \x9b2J [bold]x[/bold]"
# Sequences a terminal would act on, once rich's own are taken out: its styling (ESC [ ... m)
# and its progress bar's (hide/show the cursor, erase the line, cursor up).
RICH = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[2K|\x1b\[[0-9]*A")


class _Acting:
    @staticmethod
    def search(text):
        return re.search(r"\x1b|[\x80-\x9f]|\u2028", RICH.sub("", text))


ACTING = _Acting()


def pty_run(tmp_path, *args):
    """Run the CLI with its stdout and stderr on a pseudo-terminal; return (code, output)."""
    leader, follower = pty.openpty()
    env = cli_env(tmp_path, TERM="xterm-256color", COLUMNS="100")
    proc = subprocess.Popen([sys.executable, "-m", "brainlab.cli", *args], cwd=tmp_path,
                            env=env, stdin=subprocess.DEVNULL, stdout=follower,
                            stderr=follower, close_fds=True)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            proc.kill()
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture
def hostile_db(tmp_path):
    root = tmp_path / "cfg" / "projects" / "-home-u-p"
    t = "2026-06-01T10:00:00.000Z"
    write(root / "sess-esc.jsonl", [
        user("sess-esc", t, text="hi"),
        assistant("sess-esc", t, "m1", "r1", usage(10, 5), model=HOSTILE, cwd=PROJECT,
                  content=[tool_use("b1", "Bash", command=COMMAND)]),
        "{not json \x1b[2J\x9b31m",
    ])
    db = tmp_path / "b.duckdb"
    code, output = pty_run(tmp_path, "ingest", "claude", str(tmp_path / "cfg" / "projects"),
                           "--db", str(db))
    return db, code, output


def test_ingest_and_read_commands_print_data_as_plain_text(tmp_path, hostile_db):
    db, code, output = hostile_db
    outputs = {"ingest claude": (code, output)}
    for args in (["usage", "models"], ["usage", "sessions"], ["usage", "daily"], ["errors"],
                 ["sql", "SELECT command FROM cc_tool_calls"],
                 ["sql", "SELECT DISTINCT model FROM cc_request_lines"],
                 ["sql", 'SELECT 1 AS "h\x1b[2Jx"']):
        outputs[" ".join(args)] = pty_run(tmp_path, *args, "--db", str(db))
    for name, (status, text) in outputs.items():
        assert status == 0, (name, text)
        assert "Traceback" not in text and "MarkupError" not in text, (name, text)
        assert not ACTING.search(text), (name, repr(text))
    assert "\\x1b[2J" in outputs["ingest claude"][1]  # the unpriced model, made visible
    assert "[link=" in outputs["usage models"][1]  # markup shown, not read
    assert "claude-\\x1b" in outputs["sql SELECT DISTINCT model FROM cc_request_lines"][1]
    assert "\\x1b[2J" in outputs["errors"][1] or "line" in outputs["errors"][1]


def test_an_error_line_shows_data_as_plain_text(tmp_path):
    code, text = pty_run(tmp_path, "sql", "SELECT 1", "--db", str(tmp_path / "x\x1b[2J.duckdb"))
    assert code == 1 and text.startswith("Error: ") and "x\\x1b[2J" in text
    assert not ACTING.search(text)


def test_check_prints_a_hostile_file_name_plainly_in_every_format(tmp_path):
    brain = tmp_path / "brain"
    name = "n o#t%e\x1b[2J\x9b1m\u2028.md"
    write_brain(brain, "workspace/p-s1/README.md", "# p-s1\n\n## Lifecycle\nttl: 7d\n")
    write_brain(brain, f"workspace/p-s1/{name}", "custom\n")
    code, text = pty_run(tmp_path, "check", str(brain), "--select", "WSP004")
    assert code == 1 and "WSP004" in text and not ACTING.search(text), repr(text)
    assert "\\x1b[2J\\x9b1m\\u2028" in text
    for fmt in ("json", "sarif"):
        done = subprocess.run([sys.executable, "-m", "brainlab.cli", "check", str(brain),
                               "--select", "WSP004", "--format", fmt], capture_output=True,
                              text=True, env={"PYTHONPATH": ":".join(sys.path),
                                              "PATH": "/usr/bin:/bin"})
        assert not re.search("[\x80-\x9f\u2028]", done.stdout) and "\\u009b" in done.stdout
        log = json.loads(done.stdout)
        if fmt == "sarif":
            (result,) = log["runs"][0]["results"]
            uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            assert uri == "workspace/p-s1/n%20o%23t%25e%1B%5B2J%C2%9B1m%E2%80%A8.md"
        else:
            assert log[0]["file"].endswith(name)  # JSON readers get the same string back


def test_sarif_caps_results_per_run_with_a_note(tmp_path):
    from brainlab.rules import check as check_module
    from brainlab.rules.formats import sarif

    brain = tmp_path / "brain"
    write_brain(brain, "workspace/p-s1/README.md", "# p-s1\n\n## Lifecycle\nttl: 7d\n")
    for i in range(7):
        write_brain(brain, f"workspace/p-s1/extra-{i}.md", "custom\n")
    result = check_module.check(brain, ["WSP004"], [""])
    assert len(result.violations) == 7
    log = json.loads(sarif(result, max_results=5))
    (run,) = log["runs"]
    assert len(run["results"]) == 5
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert any("2 of 7 results left out" in n["message"]["text"] for n in notes)


def test_visible_and_json_safe():
    assert visible("a\x1b[2J\x9b\x07\u2028\u202eb\tc") == "a\\x1b[2J\\x9b\\x07\\u2028\\u202eb\\x09c"
    assert visible("é ü 漢字 [link=x]") == "é ü 漢字 [link=x]"
    text = json.dumps({"k": "\x9b\u2028\u2029"}, ensure_ascii=False)
    assert json.loads(json_safe(text)) == {"k": "\x9b\u2028\u2029"}
    assert not re.search("[\x80-\x9f\u2028\u2029]", json_safe(text))
