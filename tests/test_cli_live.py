"""`brainlab hooks install|uninstall`, `hook ingest`, `hook session-start` as users and Claude Code
run them: the console script in a subprocess, settings files with other hooks, JSON on stdin,
a store another process holds (issue 25).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from claude_factory import assistant, usage
from conftest import seeded_cache

SCRIPT = Path(sys.executable).with_name("brainlab")
SID = "sess-hook-1"

THEIRS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm run test:*)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "~/bin/guard.sh", "timeout": 5}]}],
    },
}


@pytest.fixture
def env(tmp_path) -> dict:
    return dict(os.environ, BRAINLAB_CACHE_DIR=str(seeded_cache(tmp_path / "cache")),
                HOME=str(tmp_path),
                CLAUDE_CONFIG_DIR=str(tmp_path / "claude"))


def cli(env, *args, stdin: bytes | None = None, cwd=None):
    return subprocess.run([str(SCRIPT), *map(str, args)], input=stdin, env=env,
                          capture_output=True, cwd=cwd, timeout=120)


def here(env, *args, stdin: bytes | None = None, cwd=None) -> subprocess.CompletedProcess:
    """:func:`cli` run in this process (click's runner, ``env`` set, in ``cwd``): for the
    cases after the first of a behaviour, which :func:`cli` runs as Claude Code does (issue
    28 item 1: ~0.3 CPU-s an interpreter)."""
    from click.testing import CliRunner

    from brainlab.cli import main

    with contextlib.chdir(cwd or os.getcwd()):
        result = CliRunner().invoke(main, list(map(str, args)), input=stdin, env=env)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout_bytes,
                                       result.stderr_bytes)


def settings_file(tmp_path, value=THEIRS) -> Path:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(value, indent=4))
    return path


def test_install_keeps_other_hooks_is_idempotent_and_uninstall_restores(tmp_path, env):
    path = settings_file(tmp_path)
    original = path.read_text()
    done = cli(env, "hooks", "install", "--settings", path, "--db", tmp_path / "s.duckdb")
    assert done.returncode == 0 and done.stdout.decode().startswith("installed in")
    installed = json.loads(path.read_text())
    assert installed["model"] == "opus" and installed["permissions"] == THEIRS["permissions"]
    assert installed["hooks"]["PreToolUse"] == THEIRS["hooks"]["PreToolUse"]
    stop = installed["hooks"]["Stop"]
    assert stop[0] == THEIRS["hooks"]["Stop"][0] and len(stop) == 2
    ours = stop[1]["hooks"][0]
    assert ours["type"] == "command" and ours["timeout"] == 10
    assert ours["command"].endswith(f"hook ingest --db {tmp_path / 's.duckdb'}")
    for event in ("SubagentStop", "SessionEnd", "PreCompact"):
        assert installed["hooks"][event][0]["hooks"][0]["command"] == ours["command"]
    assert "hook session-start" in installed["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert installed["statusLine"]["type"] == "command"
    assert installed["statusLine"]["command"].endswith("statusline")

    text = path.read_text()
    again = cli(env, "hooks", "install", "--settings", path, "--db", tmp_path / "s.duckdb")
    assert again.returncode == 0 and b"already installed" in again.stdout
    assert path.read_text() == text

    gone = cli(env, "hooks", "uninstall", "--settings", path)
    assert gone.returncode == 0 and gone.stdout.decode().startswith("removed from")
    assert json.loads(path.read_text()) == json.loads(original)
    assert cli(env, "hooks", "uninstall", "--settings", path).stdout.endswith(
        b"nothing of brainlab; nothing changed\n")


def test_users_status_line_is_kept(tmp_path, env):
    path = settings_file(tmp_path, {"statusLine": {"type": "command", "command": "mine.sh"}})
    done = cli(env, "hooks", "install", "--settings", path)
    assert done.returncode == 0 and b"statusLine kept" in done.stdout
    value = json.loads(path.read_text())
    assert value["statusLine"]["command"] == "mine.sh" and "Stop" in value["hooks"]
    cli(env, "hooks", "uninstall", "--settings", path)
    assert json.loads(path.read_text()) == {"statusLine": {"type": "command",
                                                           "command": "mine.sh"}}


MALFORMED = ['{"hooks": {"Stop": [', "[1, 2]", '{"hooks": []}', '{"hooks": {"Stop": {}}}',
             "\ufeff{oops}", "\x00\xff"]


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_settings_untouched_one_error_line(tmp_path, env, text):
    """The first text through the console script, the others in this process."""
    path = tmp_path / "settings.json"
    path.write_text(text)
    run = cli if text == MALFORMED[0] else here
    for command in ("install", "uninstall"):
        done = run(env, "hooks", command, "--settings", path)
        assert done.returncode == 1 and done.stdout == b""
        lines = done.stderr.decode().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: settings file")
        assert path.read_text() == text


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path, env):
    path = settings_file(tmp_path)
    before = path.read_text()
    done = cli(env, "hooks", "install", "--settings", path, "--dry-run")
    out = done.stdout.decode()
    assert done.returncode == 0 and path.read_text() == before
    assert out.startswith(f"--- {path}\n+++ {path}\n")
    assert '+    "statusLine": {' in out and "hook session-start" in out


def test_scopes_name_claude_codes_files(tmp_path, env):
    project = tmp_path / "proj"
    project.mkdir()
    assert here(env, "hooks", "install", "--scope", "project", cwd=project).returncode == 0
    assert here(env, "hooks", "install", "--scope", "local", cwd=project).returncode == 0
    assert cli(env, "hooks", "install", cwd=project).returncode == 0  # user: CLAUDE_CONFIG_DIR
    for path in (project / ".claude" / "settings.json",
                 project / ".claude" / "settings.local.json",
                 tmp_path / "claude" / "settings.json"):
        assert "Stop" in json.loads(path.read_text())["hooks"], path


# --- hook ingest ------------------------------------------------------------------------------
def write_transcript(root: Path, n: int) -> Path:
    """A transcript of ``n`` calls under ``root``/claude (the env's CLAUDE_CONFIG_DIR)."""
    path = root / "claude" / "projects" / "-home-u-projets-alpha" / f"{SID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(assistant(
        SID, f"2026-04-01T10:{i:02d}:00.000Z", f"m{i}", f"r{i}", usage(10, 5, 0, 100)),
        separators=(",", ":")) + "\n" for i in range(n)))
    return path


def requests(db: Path) -> int:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT count(*) FROM cc_request_lines WHERE session_id = ?",
                           [SID]).fetchone()[0]
    finally:
        con.close()


def hook_input(path: Path, event="Stop") -> bytes:
    return json.dumps({"session_id": SID, "transcript_path": str(path), "cwd": "/home/u",
                       "hook_event_name": event, "stop_hook_active": False}).encode()


def live(env) -> Path:
    return Path(env["BRAINLAB_CACHE_DIR"]) / "live"


def test_hook_ingest_reads_the_named_transcript_incrementally(tmp_path, env):
    path = write_transcript(tmp_path, 3)
    db = tmp_path / "store.duckdb"
    done = cli(env, "hook", "ingest", "--foreground", "--db", db, stdin=hook_input(path))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert requests(db) == 3
    with open(path, "a") as handle:  # one new message
        handle.write(json.dumps(assistant(SID, "2026-04-01T11:00:00.000Z", "m9", "r9",
                                          usage(1, 1, 0, 0))) + "\n")
    cli(env, "hook", "ingest", "--foreground", "--db", db, stdin=hook_input(path))
    assert requests(db) == 4
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT runs FROM cc_files").fetchone() == (2,)
    con.close()
    assert "2 transcript" not in (live(env) / "live.log").read_text()
    assert json.loads((live(env) / "digest.json").read_text())["sessions"] == {}  # 2026-04


def test_hook_ingest_detached_by_default(tmp_path, env):
    path = write_transcript(tmp_path, 2)
    db = tmp_path / "store.duckdb"
    started = time.monotonic()
    done = cli(env, "hook", "ingest", "--db", db, stdin=hook_input(path, "SubagentStop"))
    assert done.returncode == 0 and done.stdout == b""
    deadline = started + 120
    log = live(env) / "live.log"
    while time.monotonic() < deadline and not (log.exists() and "ingested" in log.read_text()):
        time.sleep(0.2)
    assert "1 transcript(s) ingested" in log.read_text()
    assert requests(db) == 2


# 1 MB of garbage from a seeded stream: every xdist worker must collect the same test ids
GARBAGE = random.Random(25).randbytes(1 << 20)


@pytest.mark.parametrize("raw", [b"", b"{", b"[]", b'{"transcript_path": 3}',
                                 b'{"transcript_path": "relative.jsonl"}', GARBAGE],
                         ids=["empty", "brace", "list", "int-path", "relative-path", "1MB-garbage"])
def test_hook_ingest_bad_input_exits_0_and_logs(tmp_path, env, raw):
    done = cli(env, "hook", "ingest", "--db", tmp_path / "s.duckdb", stdin=raw)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert "hook ingest:" in (live(env) / "live.log").read_text()
    assert not (tmp_path / "s.duckdb").exists()


HOLD = """
import sys, time
from brainlab.store.schema import open_writer
con = open_writer(sys.argv[1])
print("held", flush=True)
sys.stdin.read()
con.close()
"""


def test_store_held_elsewhere_spools_then_next_ingest_drains(tmp_path, env):
    path = write_transcript(tmp_path, 3)
    db = tmp_path / "store.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        done = cli(env, "hook", "ingest", "--foreground", "--db", db, stdin=hook_input(path))
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
        assert "in use by another process" in (live(env) / "live.log").read_text()
        assert json.loads((live(env) / "spool.jsonl").read_text())["path"] == str(path)
    finally:
        holder.communicate("", timeout=60)
    assert requests(db) == 0  # nothing lost: the path waits in the spool
    other = tmp_path / "elsewhere"
    other.mkdir()
    done = cli(env, "ingest", "claude", other, "--db", db, cwd=tmp_path)  # any ingest
    assert done.returncode == 0, done.stderr
    assert requests(db) == 3
    assert not list(live(env).glob("spool*"))


# --- hook session-start -----------------------------------------------------------------------
def test_session_start_silent_without_anything_to_say(tmp_path, env):
    path = write_transcript(tmp_path, 1)
    data = json.dumps({"session_id": SID, "transcript_path": str(path), "source": "startup",
                       "hook_event_name": "SessionStart"}).encode()
    done = cli(env, "hook", "session-start", "--db", tmp_path / "none.duckdb", stdin=data)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    for raw in (b"", b"{", os.urandom(1 << 20)):  # the first as Claude Code runs it, then here
        assert (cli if raw == b"" else here)(env, "hook", "session-start", stdin=raw).stdout == b""


def test_session_start_budget_and_coach(tmp_path, env):
    path = tmp_path / "claude" / "projects" / "p" / "t.jsonl"  # in CLAUDE_CONFIG_DIR
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"type": "user", "sessionId": SID, "isSidechain": False,
                                "message": {"role": "user", "content": "brain work +conserve"},
                                "timestamp": "2026-04-01T10:00:00.000Z"}) + "\n")
    folder = live(env)
    folder.mkdir(parents=True)
    (folder / "digest.json").write_text(json.dumps({"coach": "coach (ratio)",
                                                    "claims": {"open": 2, "stale": 1}}))
    data = json.dumps({"session_id": SID, "transcript_path": str(path), "source": "resume",
                       "hook_event_name": "SessionStart"}).encode()
    done = cli(env, "hook", "session-start", "--db", tmp_path / "none.duckdb", stdin=data)
    assert done.returncode == 0 and done.stderr == b""
    out = json.loads(done.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = out["hookSpecificOutput"]["additionalContext"].splitlines()
    assert context[0].startswith("brainlab: SPEC §3.3 coach auto-trigger") and \
        "coach (ratio)" in context[0]
    assert context[1] == "brainlab: claims: 2 open, 1 stale (SPEC §2.6)."
    assert context[2] == "brainlab: mode +conserve: stay under 40% of context (SPEC §3.3)."


def test_installed_commands_run_through_a_shell_as_claude_code_does(tmp_path, env):
    """The settings' commands (the -S launcher) print the line and spool the transcript."""
    path = settings_file(tmp_path, {})
    db = tmp_path / "store.duckdb"
    assert cli(env, "hooks", "install", "--settings", path, "--db", db).returncode == 0
    value = json.loads(path.read_text())
    transcript = write_transcript(tmp_path, 2)
    status = json.dumps({"session_id": SID, "transcript_path": str(transcript),
                         "model": {"display_name": "Opus 4.5"},
                         "cost": {"total_cost_usd": 0.5}}).encode()
    shell_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}  # the launcher finds us
    line = subprocess.run(["sh", "-c", value["statusLine"]["command"] + " --plain"],
                          input=status, env=shell_env, capture_output=True, timeout=60)
    assert (line.returncode, line.stderr) == (0, b"")
    assert line.stdout.decode() == "Opus 4.5 | ctx 0% | $0.50 | today $0.50\n"
    ingest = value["hooks"]["Stop"][0]["hooks"][0]["command"]
    done = subprocess.run(["sh", "-c", ingest], input=hook_input(transcript), env=shell_env,
                          capture_output=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    log = live(env) / "live.log"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (log.exists() and "ingested" in log.read_text()):
        time.sleep(0.2)
    assert requests(db) == 2


def test_detached_worker_waits_for_the_previous_writer(tmp_path, env):
    """Two Stop hooks in a row: the second worker finds the store held, then gets it."""
    path = write_transcript(tmp_path, 3)
    db = tmp_path / "store.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        done = cli(env, "hook", "ingest", "--db", db, stdin=hook_input(path))
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
        time.sleep(1.0)
    finally:
        holder.communicate("", timeout=60)  # the writer goes within the worker's 10 s
    log = live(env) / "live.log"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (log.exists() and "ingested" in log.read_text()):
        time.sleep(0.2)
    assert "in use" not in log.read_text()
    assert requests(db) == 3


def test_unusable_store_logs_and_keeps_the_spool(tmp_path, env):
    """A store path that is a folder: exit 0, one log line, the path still spooled."""
    path = write_transcript(tmp_path, 1)
    done = cli(env, "hook", "ingest", "--foreground", "--db", tmp_path, stdin=hook_input(path))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert "hook ingest: " in (live(env) / "live.log").read_text()
    spooled = [json.loads(line)["path"] for f in live(env).glob("spool*")
               for line in f.read_text().splitlines()]
    assert spooled == [str(path)]


def test_session_start_reads_the_store_through_its_views(demo, tmp_path, env):
    """On the demo store: the claims line comes from claim_status_at, the digest is written."""
    import shutil

    db = tmp_path / "demo.duckdb"
    shutil.copy(demo["db"], db)
    con = duckdb.connect(str(db), read_only=True)
    (stale,) = con.execute("SELECT count(*) FILTER (WHERE is_stale) FROM claim_status_at(?)",
                           [time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())]).fetchone()
    con.close()
    data = json.dumps({"session_id": "new", "source": "startup",
                       "hook_event_name": "SessionStart"}).encode()
    done = cli(env, "hook", "session-start", "--db", db, stdin=data)
    assert done.returncode == 0 and done.stderr == b""
    assert stale >= 1  # the synth's history ends on a fixed date: its open claims are past TTL
    digest = json.loads((live(env) / "digest.json").read_text())
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"{stale} stale (SPEC §2.6)" in context
    assert digest["claims"]["stale"] == stale


# --- the running sprint's breath alert (SPEC §4.4, issue 25) ----------------------------------
def _sprint_brain(tmp_path, started: float, ended: float | None) -> Path:
    """A brain with one recorded sprint and the broker's expire block printing its metrics."""
    def iso(t):
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))

    brain = tmp_path / "brain"
    (brain / "progression" / "sprints").mkdir(parents=True)
    (brain / "progression" / "broker").mkdir(parents=True)
    line = {"sprint": "live-1", "project": "shop", "domain": "auth", "agent": "developer",
            "referenced": ["auth.routes.ts"], "loaded": ["auth.routes.ts", "a.ts", "b.ts"],
            "started_at": iso(started)} | ({"ended_at": iso(ended)} if ended else {})
    (brain / "progression" / "sprints" / "live.jsonl").write_text(json.dumps(line) + "\n")
    (brain / "progression" / "broker" / f"{iso(started)[:10]}-live.md").write_text(
        "Context-broker — expire sprint live-1\n\nRelease map :\n"
        '  LIBÉRER : ["a.ts"]\n  GARDER  : ["auth.routes.ts", "b.ts"] — en cours\n\n'
        "Breath metrics :\n  context_load : 3.0\n  stale_ratio  : 66%\n"
        "  breath_depth : +2\n  exhale_rate  : 33%\n", encoding="utf-8")
    return brain


@pytest.mark.parametrize("running", [True, False], ids=["running", "ended-days-ago"])
def test_running_sprint_breath_alert_reaches_session_start_and_status_line(tmp_path, env,
                                                                          running):
    now = time.time()
    started, ended = (now - 3600, None) if running else (now - 4 * 86400, now - 3 * 86400)
    brain = _sprint_brain(tmp_path, started, ended)
    db = tmp_path / "store.duckdb"
    done = cli(env, "ingest", "sprints", brain, "--db", db, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    start = json.dumps({"session_id": SID, "source": "startup",
                        "hook_event_name": "SessionStart"}).encode()
    done = cli(env, "hook", "session-start", "--db", db, stdin=start, cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == b""
    alert = "breath: overload, noise, retention"
    line = cli(env, "statusline", "--plain", stdin=json.dumps(
        {"session_id": SID, "model": {"display_name": "Opus"}}).encode(), cwd=tmp_path)
    assert line.returncode == 0
    if running:
        context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        assert f"brainlab: running sprint {alert} (SPEC §4.4)." in context.splitlines()
        assert json.loads((live(env) / "digest.json").read_text())["breath"] == alert
        assert alert in line.stdout.decode()
    else:  # a sprint that ended days ago is not running: no alert anywhere
        assert b"breath" not in done.stdout
        assert json.loads((live(env) / "digest.json").read_text())["breath"] is None
        assert "breath" not in line.stdout.decode()
