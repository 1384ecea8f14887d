"""Hostile input to the live commands, as Claude Code runs them (issue 46 items 2-5).

Every case is the installed command in a subprocess with JSON on stdin exactly as Claude Code
sends it: the status line and the ingest hook through the ``python -S`` launcher ``hooks
install`` writes, session start through the console script. Cases of one kind start together
(the processes run side by side) so a file of them costs a few seconds of CPU.

The general rules under test: a transcript is read only when it is a regular ``*.jsonl`` file
inside Claude's folders (a FIFO, a device, ``/proc``, a link out of the folders: refused at
once, never recorded); both commands end within their deadline whatever blocks them;
everything printed is inert (control characters as escapes, one bounded line, non-finite
numbers as the missing marker) and no non-finite number reaches the limit snapshots; a
writer runs the store's views sealed; the launcher runs every hook command.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from claude_factory import assistant, usage
from conftest import seeded_cache

REPO = Path(__file__).resolve().parent.parent
LAUNCH = [sys.executable, "-S", str(REPO / "brainlab" / "live" / "launch.py")]
SCRIPT = str(Path(sys.executable).with_name("brainlab"))
SID = "5afe0046-0000-4000-8000-000000000046"
SECRET = "TOPSECRET-46"
# what a print must never hold: C0 but the final newline, DEL, C1, bidi controls and marks,
# line/paragraph separators, zero-width and invisible format characters, lone surrogates
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\xad\u061c\u200b-\u200f\u2028-\u202e"
                    "\u2060-\u2064\u2066-\u206f\ufeff\ud800-\udfff]")
SGR = re.compile(r"\x1b\[\d+m")  # the line's own colours


@pytest.fixture
def env(tmp_path) -> dict:
    return dict(os.environ, HOME=str(tmp_path), CLAUDE_CONFIG_DIR=str(tmp_path / "claude"),
                BRAINLAB_CACHE_DIR=str(seeded_cache(tmp_path / "cache")), COLUMNS="200")


def projects(tmp_path: Path) -> Path:
    folder = tmp_path / "claude" / "projects" / "-home-u-alpha"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def transcript_text(prompt: str = "brain work +sprint", tokens: int = 90_000) -> str:
    lines = [{"type": "user", "sessionId": SID, "timestamp": "2026-04-01T10:00:00.000Z",
              "isSidechain": False, "uuid": "u0",
              "message": {"role": "user", "content": prompt}},
             assistant(SID, "2026-04-01T10:09:00.000Z", "m1", "r1", usage(tokens - 1000, 50,
                                                                          0, 1000))]
    return "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines)


def run_all(cases: list[tuple[list[str], bytes]], env: dict, timeout: float = 120,
            ) -> list[subprocess.CompletedProcess]:
    """Start every (command, stdin) case, then feed and collect them in turn."""
    procs = [subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env) for cmd, _ in cases]
    done = []
    for proc, (cmd, data) in zip(procs, cases, strict=True):
        out, err = proc.communicate(data, timeout=timeout)  # a hang fails here
        done.append(subprocess.CompletedProcess(cmd, proc.returncode, out, err))
    return done


def status(data: dict | str, sid: str) -> bytes:
    if isinstance(data, str):
        return data.encode()
    return json.dumps({"session_id": sid, "model": {"id": "claude-opus-4-5",
                                                    "display_name": "Opus"}, **data}).encode()


def cache_text(env: dict) -> str:
    folder = Path(env["BRAINLAB_CACHE_DIR"]) / "live"
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*")
                     if p.is_file() and not p.is_symlink())


def hostile_paths(tmp_path: Path) -> dict[str, str]:
    """transcript_path values no reader may open: name -> path."""
    inside = projects(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.jsonl"  # a transcript-like file outside: "+conserve", SECRET
    secret.write_text(transcript_text(f"brain debug +conserve {SECRET}", 123_456))
    os.mkfifo(outside / "fifo.jsonl")
    os.mkfifo(inside / "fifo.jsonl")
    (inside / "notes.txt").write_text(transcript_text(f"brain debug +conserve {SECRET}"))
    (inside / "dir.jsonl").mkdir()
    links = {"out.jsonl": secret, "notes.jsonl": inside / "notes.txt",
             "shadow.jsonl": Path("/etc/shadow"), "mem.jsonl": Path("/proc/self/mem"),
             "zero.jsonl": Path("/dev/zero"), "outfifo.jsonl": outside / "fifo.jsonl",
             "dangling.jsonl": inside / "missing.jsonl", "loop.jsonl": inside / "loop.jsonl"}
    for name, target in links.items():
        (inside / name).symlink_to(target)
    return {"fifo": str(inside / "fifo.jsonl"), "etc-shadow": "/etc/shadow",
            "proc-self-mem": "/proc/self/mem", "proc-fd": "/proc/self/fd/0",
            "dev-zero": "/dev/zero", "outside-file": str(secret),
            "dotdot-out": f"{inside}/../../../outside/secret.jsonl",
            "dir": str(inside / "dir.jsonl"), "relative": "claude/projects/x.jsonl",
            "nul": str(inside / "a\0b.jsonl"),
            **{f"link-{name[:-6]}": str(inside / name) for name in links}}


# --- item 2: only regular transcripts under Claude's folders, within a deadline ---------------
def test_status_line_refuses_every_path_but_a_transcript_in_claudes_folders(tmp_path, env):
    paths = hostile_paths(tmp_path)
    good = projects(tmp_path) / f"{SID}.jsonl"
    good.write_text(transcript_text())
    cases = [(LAUNCH + ["statusline", "--plain"],
              status({"transcript_path": path}, f"s-{name}")) for name, path in paths.items()]
    cases.append((LAUNCH + ["statusline", "--plain"], status({"transcript_path": str(good)},
                                                             "s-good")))
    for name, done in zip([*paths, "good"], run_all(cases, env), strict=True):
        line = done.stdout.decode()
        assert (done.returncode, done.stderr) == (0, b""), (name, done.stderr)
        assert line.count("\n") == 1 and line.startswith("Opus"), (name, line)  # not degraded
        if name == "good":  # the control: the transcript's declared session is read
            assert "work +sprint" in line and "ctx 45%" in line, line
        else:
            assert "conserve" not in line and SECRET not in line and "ctx" not in line, (
                name, line)
    recorded = cache_text(env)
    assert SECRET not in recorded and "conserve" not in recorded
    for name, path in paths.items():  # a refused path (or where its link led) never recorded
        assert path not in recorded, name
    assert str(tmp_path / "outside") not in recorded and "/etc/shadow" not in recorded


@pytest.mark.parametrize("command", ["statusline", "session-start"])
def test_a_stdin_never_closed_ends_at_the_deadline_with_the_degraded_output(tmp_path, env,
                                                                            command):
    """Claude Code never closes the pipe: the blocked read ends at the budget (exit 0)."""
    cmd = LAUNCH + ["statusline"] if command == "statusline" else [
        SCRIPT, "hook", "session-start", "--db", str(tmp_path / "none.duckdb")]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    try:
        proc.stdin.write(b'{"session_id": "s", "model": {"display_name": "Opus"}')  # no EOF
        proc.stdin.flush()
        assert proc.wait(timeout=90) == 0  # without the deadline: blocked for ever
        out = proc.stdout.read()
        assert out == (b"brainlab\n" if command == "statusline" else b""), out
        assert proc.stderr.read() == b""
    finally:
        proc.kill()
        proc.stdin.close()
        proc.wait()
    assert "deadline" in (Path(env["BRAINLAB_CACHE_DIR"]) / "live" / "live.log").read_text()


def test_session_start_refuses_fifos_and_links_out_for_every_source(tmp_path, env):
    paths = hostile_paths(tmp_path)
    picked = ["fifo", "link-outfifo", "link-out", "link-shadow", "link-mem", "link-notes",
              "dotdot-out", "proc-self-mem"]
    sources = ["startup", "resume", "clear", "compact"]
    runs = [("fifo", source) for source in sources] + [
        (name, sources[i % 4]) for i, name in enumerate(picked[1:])]
    cases = [([SCRIPT, "hook", "session-start", "--db", str(tmp_path / "none.duckdb")],
              json.dumps({"session_id": f"s-{i}", "transcript_path": paths[name],
                          "cwd": str(tmp_path), "hook_event_name": "SessionStart",
                          "source": source}).encode()) for i, (name, source) in enumerate(runs)]
    for (_cmd, data), done in zip(cases, run_all(cases, env), strict=True):
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b""), (data, done)
    assert SECRET not in cache_text(env)


# --- item 3: everything printed is inert -------------------------------------------------------
NAMES = {
    "esc-clear": "Op\x1b[2J\x1b[Hus", "osc8": "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07",
    "c1-csi": "Op\x9b2Jus", "bidi": "Opus \u202egnp.exe\u202c", "marks": "\u200fOpus\u200e\u061c",
    "newline": "Opus\nsecond line\r\n", "separators": "Opus\u2028\u2029x", "nul-del": "O\x00p\x7f",
    "zero-width": "O\u200bp\u2060u\ufeffs", "tags": "Opus\U000e0041\U000e007f",
    "bell-backspace": "Opus\x07\x08\x08\x08xxx", "long": "O" + "\x1b" * 5000,
}


def test_every_printed_character_is_inert(tmp_path, env, monkeypatch):
    live = Path(env["BRAINLAB_CACHE_DIR"]) / "live"
    live.mkdir(parents=True, exist_ok=True)
    (live / "digest.json").write_text(json.dumps({"coach": "coach (\x1b]8;;http://x\x07ratio)",
                                                  "breath": "breath: \u202eevil\n2"}))
    cases = []
    for name, text in NAMES.items():
        for plain in ([], ["--plain"]):
            data = {"model": {"display_name": text}, "effort": {"level": text},
                    "worktree": {"path": f"/x/.claude/worktrees/T{text}"},
                    "context_window": {"used_percentage": 42}}
            cases.append((LAUNCH + ["statusline", *plain], status(data, f"s-{name}")))
    # a lone surrogate as JSON sends it (an escape: it is not UTF-8), and raw bytes that are not
    cases.append((LAUNCH + ["statusline"], b'{"session_id": "s-sur", "model": {"display_name":'
                  b' "Op\\ud800us\\udfff"}, "effort": {"level": "\\udc00"}}'))
    cases.append((LAUNCH + ["statusline"], b'{"model": {"display_name": "Op\xff\xfeus"}}'))
    # a state planted with a bad offset and a non-finite cost; a session id that climbs out
    from brainlab.live.cache import state_path

    monkeypatch.setenv("BRAINLAB_CACHE_DIR", env["BRAINLAB_CACHE_DIR"])
    Path(state_path("s-esc-clear")).parent.mkdir()
    Path(state_path("s-esc-clear")).write_text('{"offset": -5, "last_cost_usd": NaN}')
    cases.append((LAUNCH + ["statusline"], status({"transcript_path": "/x/../../etc/a.jsonl",
                                                   "cost": {"total_cost_usd": 1}},
                                                  "../../../../escape")))
    cases.append((LAUNCH + ["statusline"], b"[" * 200_000))  # deeper than any parser goes
    for (_cmd, data), done in zip(cases, run_all(cases, env), strict=True):
        assert (done.returncode, done.stderr) == (0, b""), data
        line = done.stdout.decode("utf-8")  # strict: never a lone surrogate or raw byte
        assert line.endswith("\n") and line.count("\n") == 1, (data, line)
        body = SGR.sub("", line[:-1])
        assert not UNSAFE.search(body), (data, line)
        assert len(body) <= 200, (data, len(body))
        if data.startswith(b"[[["):
            assert line == "brainlab\n"
        if b"s-sur" in data:
            assert "Op\\ud800us" in body, body  # shown as its escape, not a line gone blank
    assert "\\x1b" in run_all([cases[0]], env)[0].stdout.decode()  # as escapes, visibly
    assert [p for p in tmp_path.rglob("*escape*")  # the climbing session id: a state file
            if not str(p).startswith(str(live / "sessions"))] == []  # in the folder only


BAD_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e308", "-1e308", "1e400", "-1",
               "1" + "0" * 400]


def test_non_finite_numbers_are_shown_missing_and_never_snapshotted(tmp_path, env):
    projects(tmp_path)  # a Claude folder for the ingest below
    now = int(time.time())
    cases = []
    for bad in BAD_NUMBERS:
        raw = (f'{{"session_id": "s-{len(cases)}", "model": {{"display_name": "Opus"}},'
               f' "cost": {{"total_cost_usd": {bad}}},'
               f' "context_window": {{"used_percentage": {bad}, "context_window_size": {bad},'
               f' "total_input_tokens": {bad}, "total_output_tokens": 5}},'
               f' "rate_limits": {{"five_hour": {{"used_percentage": {bad}, "resets_at": {bad}}},'
               f' "seven_day": {{"used_percentage": 12, "resets_at": {now + 86400}}}}}}}')
        cases.append((LAUNCH + ["statusline", "--plain"], raw.encode()))
    for (_cmd, data), done in zip(cases, run_all(cases, env), strict=True):
        line = done.stdout.decode()
        assert (done.returncode, done.stderr) == (0, b""), data
        assert line.count("\n") == 1 and len(line) < 120, line
        assert not re.search(r"inf|nan", line, re.I) and not re.search(r"\d{8}", line), line
        assert "ctx —" in line and "$—" in line and "5h —" in line, line
    snapshots = Path(env["BRAINLAB_CACHE_DIR"]) / "live" / "limit_snapshots.jsonl"

    def refuse(word):
        raise ValueError(word)

    rows = [json.loads(x, parse_constant=refuse) for x in snapshots.read_text().splitlines()]
    assert len(rows) == len(BAD_NUMBERS)  # each kept its good fields (seven_day, output)
    for row in rows:
        assert row["seven_day_pct"] == 12 and row["total_output_tokens"] == 5
        for key in ("five_hour_pct", "context_used_pct", "context_window_size",
                    "total_cost_usd", "total_input_tokens", "five_hour_resets_at"):
            assert row[key] is None, (key, row)
    done = subprocess.run([SCRIPT, "ingest", "claude", "--db", str(tmp_path / "s.duckdb")],
                          env=env, capture_output=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr  # issue 47: -Infinity made it exit 70
    con = duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM limit_snapshots").fetchone() == (len(rows),)
    con.close()


def test_the_status_line_prints_through_the_printer_of_every_command():
    """Its missing marker is the tables'; its segments go through plaintext.visible."""
    from brainlab.common import plaintext, tables
    from brainlab.live import statusline

    assert statusline.MISSING == plaintext.MISSING == tables.MISSING
    for text in [*NAMES.values(), "Op\ud800us", "plain ↻ text"]:
        assert statusline._paint(text, None, True)[0] == plaintext.visible(text)


def test_ranges_are_the_ingests():
    """The status line's bounds are spec/ranges.py's (spelled again there for speed)."""
    ranges = pytest.importorskip("brainlab.spec.ranges")
    from brainlab.live import statusline as sl

    for mine, theirs in ((sl.PERCENT, ranges.PERCENT), (sl.COST_USD, ranges.COST_USD),
                         (sl.TOKENS, ranges.TOKENS), (sl.SESSION_TOKENS, ranges.SESSION_TOKENS)):
        assert mine == (theirs.low, theirs.high), theirs.name
    assert sl.RESETS_AHEAD_S == ranges.RESETS_AHEAD_DAYS * 86400
    assert sl.EPOCH_S[0] == (ranges.EARLIEST - ranges._EPOCH).total_seconds()


# --- items 4 and 5: the sealed writer, hook input outside the roots, the launcher -------------
def installed(tmp_path: Path, env: dict, db: Path) -> dict[str, str]:
    """The commands `hooks install` writes into the user's settings (CLAUDE_CONFIG_DIR)."""
    done = subprocess.run([SCRIPT, "hooks", "install", "--db", str(db)], env=env,
                          capture_output=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    value = json.loads((tmp_path / "claude" / "settings.json").read_text())
    return {"stop": value["hooks"]["Stop"][-1]["hooks"][0]["command"],
            "start": value["hooks"]["SessionStart"][-1]["hooks"][0]["command"],
            "status": value["statusLine"]["command"]}


def shell(command: str, data: dict, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    """``command`` through a shell, as Claude Code runs a hook, fed ``data`` as JSON."""
    return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(data).encode(),
                          env=env, capture_output=True, cwd=cwd, timeout=300)


def stop_input(path: Path | str, tmp_path: Path) -> dict:
    return {"session_id": SID, "transcript_path": str(path), "cwd": str(tmp_path),
            "permission_mode": "default", "hook_event_name": "Stop", "stop_hook_active": False}


def test_installed_launcher_runs_every_hook_command_the_foreground_ingest_too(tmp_path, env):
    db = tmp_path / "store.duckdb"
    commands = installed(tmp_path, env, db)
    assert " -S " in commands["stop"] and " -S " in commands["status"]  # the launcher
    path = projects(tmp_path) / f"{SID}.jsonl"
    path.write_text(transcript_text())
    log = Path(env["BRAINLAB_CACHE_DIR"]) / "live" / "live.log"
    # the ingest hook in the foreground through the launcher (duckdb is in site-packages)
    done = shell(commands["stop"] + " --foreground", stop_input(path, tmp_path), env, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b""), done.stderr
    assert "ModuleNotFoundError" not in log.read_text()
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM cc_request_lines").fetchone() == (1,)
    con.close()
    start = shell(commands["start"], {"session_id": "s2", "transcript_path": str(path),
                                      "cwd": str(tmp_path), "hook_event_name": "SessionStart",
                                      "source": "startup"}, env, tmp_path)
    assert (start.returncode, start.stderr) == (0, b"")
    assert "+sprint" in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    line = shell(commands["status"], {"session_id": "s3", "transcript_path": str(path),
                                      "model": {"display_name": "Opus"}}, env, tmp_path)
    assert line.returncode == 0 and line.stdout.startswith(b"Opus | ")
    # the detached hook as written: returns at once, the worker takes the path
    done = shell(commands["stop"], stop_input(path, tmp_path), env, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert "ModuleNotFoundError" not in log.read_text()


def test_the_hook_workers_digest_runs_sealed(tmp_path, env):
    """A store whose view reads a local file: the digest fails cleanly, nothing leaks."""
    db = tmp_path / "store.duckdb"
    path = projects(tmp_path) / f"{SID}.jsonl"
    path.write_text(transcript_text())
    hook = [SCRIPT, "hook", "ingest", "--foreground", "--db", str(db)]
    assert run_all([(hook, json.dumps(stop_input(path, tmp_path)).encode())],
                   env)[0].returncode == 0
    (tmp_path / "secret.txt").write_text(SECRET)
    con = duckdb.connect(str(db))  # a .duckdb file is code: its view reads a local file
    con.execute("CREATE OR REPLACE VIEW cold_start_kpi AS SELECT content AS status, 0.5 AS"
                " pass_rate, TIMESTAMP '2026-01-01' AS started_at, 's' AS sess_id FROM"
                f" read_text('{tmp_path / 'secret.txt'}')")
    con.close()
    with open(path, "a") as handle:  # one more message: the worker ingests, then digests
        handle.write(json.dumps(assistant(SID, "2026-04-01T11:00:00.000Z", "m2", "r2",
                                          usage(5, 5, 0, 0))) + "\n")
    done = run_all([(hook, json.dumps(stop_input(path, tmp_path)).encode())], env)[0]
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    live = Path(env["BRAINLAB_CACHE_DIR"]) / "live"
    assert SECRET not in (live / "digest.json").read_text()  # the query failed instead
    log = (live / "live.log").read_text()
    assert "digest not built" in log and "disabled" in log and SECRET not in log
    start, line = run_all([
        ([SCRIPT, "hook", "session-start", "--db", str(db)],
         json.dumps({"session_id": "s2", "source": "startup",
                     "hook_event_name": "SessionStart"}).encode()),
        (LAUNCH + ["statusline"], status({"transcript_path": str(path)}, "s3"))], env)
    assert start.returncode == 0 and start.stderr == b"" and SECRET.encode() not in start.stdout
    assert line.returncode == 0 and SECRET.encode() not in line.stdout


def test_hook_input_outside_the_roots_is_refused_and_its_path_redacted(tmp_path, env):
    inside = projects(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    target = outside / "target.jsonl"  # a transcript, but outside Claude's folders
    target.write_text(transcript_text())
    token = "sk-ant-api03-" + "A" * 93 + "AA"
    (inside / f"{token}.jsonl").symlink_to(target)
    (inside / "up.jsonl").symlink_to(outside)
    direct = outside / "direct.jsonl"  # named by the hook itself: refused, logged as named
    direct.write_text(transcript_text())
    db = tmp_path / "store.duckdb"
    cases = [(LAUNCH + ["hook", "ingest", "--foreground", "--db", str(db)],
              json.dumps(stop_input(p, tmp_path) | {"agent_transcript_path": str(direct)}
                         ).encode())
             for p in (inside / f"{token}.jsonl", f"{inside}/../../../elsewhere/target.jsonl",
                       "/proc/self/fd/0.jsonl")]
    for done in run_all(cases[:1], env) + run_all(cases[1:], env):  # one writer at a time
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    log = (Path(env["BRAINLAB_CACHE_DIR"]) / "live" / "live.log").read_text()
    assert "transcript_path refused (skipped: symlink to a file outside the transcript root)" \
        in log
    assert "[REDACTED:anthropic-key].jsonl" in log and token not in log
    assert f"agent_transcript_path refused (skipped: outside Claude's transcript folders):" \
        f" {direct}" in log
    assert not db.exists() or duckdb.connect(str(db), read_only=True).execute(
        "SELECT count(*) FROM cc_files WHERE source_file LIKE '%elsewhere%'").fetchone() == (0,)
    spool = Path(env["BRAINLAB_CACHE_DIR"]) / "live"
    assert str(target) not in cache_text(env) and not list(spool.glob("spool*"))  # where the
    # links led: never written anywhere


def test_state_file_names_are_the_ones_binascii_gave():
    """cache.crc32 replaces binascii.crc32 (a shared library to load at every status line):
    the state files of sessions already running keep their names."""
    import binascii
    import re

    from brainlab.live.cache import crc32, state_path

    for text in ["", SID, "sess-live-1", "../../../../escape", "é" * 100, "x" * 300, "\ud800",
                 "a b\x1b[2J/c", "Z" * 70]:
        raw = text.encode("utf-8", "replace")
        assert crc32(raw) == binascii.crc32(raw), text
        name = f"{re.sub(r'[^A-Za-z0-9_-]', '_', text)[:64]}-{binascii.crc32(raw):08x}.json"
        assert os.path.basename(state_path(text)) == name, text


def test_a_spooled_path_swapped_for_a_link_out_is_refused_at_the_drain(tmp_path, env,
                                                                       monkeypatch):
    """The hook checked the path when it spooled it; the drain checks it again: a transcript
    replaced meanwhile by a link out of Claude's folders is dropped, never read."""
    from brainlab.live import spool
    from brainlab.store import open_writer

    for key in ("HOME", "CLAUDE_CONFIG_DIR", "BRAINLAB_CACHE_DIR"):
        monkeypatch.setenv(key, env[key])
    inside = projects(tmp_path)
    good, swapped = inside / "good.jsonl", inside / "swapped.jsonl"
    good.write_text(transcript_text())
    swapped.write_text(transcript_text().replace(SID, "sess-swapped"))
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(transcript_text().replace(SID, "sess-outside"))
    swapped.unlink()
    swapped.symlink_to(outside)  # after the hook spooled it
    con = open_writer(tmp_path / "store.duckdb")
    try:
        assert spool.ingest_paths(con, [str(good), str(swapped)]) == 1
        sessions = {r[0] for r in con.execute("SELECT DISTINCT session_id FROM cc_requests"
                                              ).fetchall()}
    finally:
        con.close()
    assert sessions == {SID}
    assert "swapped.jsonl refused (no longer a transcript inside Claude's folders)" in \
        cache_text(env)
