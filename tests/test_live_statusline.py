"""`brainlab statusline` as Claude Code runs it: the console script, JSON on stdin (issue 25).

Every field of the documented object missing in turn, nulls (before the first call, after
/compact), wrong types and 1 MB of garbage print a line and exit 0; the per-session state
advances over the transcript's new lines only and survives concurrent runs; the limit
snapshots reach the store through the next ingest.
"""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from claude_factory import assistant, tool_use, usage
from conftest import seeded_cache

SCRIPT = Path(sys.executable).with_name("brainlab")
SID = "sess-live-1"


def full_input(transcript: Path | None = None) -> dict:
    """A status line object of the documented shape, every field set (resets from now)."""
    now = int(time.time())
    return {
        "hook_event_name": "Status", "session_id": SID,
        "transcript_path": str(transcript) if transcript else "/nonexistent/t.jsonl",
        "cwd": "/home/u/projets/alpha",
        "model": {"id": "claude-opus-4-5", "display_name": "Opus 4.5"},
        "workspace": {"current_dir": "/home/u/projets/alpha", "project_dir": "/home/u/projets/alpha"},
        "version": "2.1.90", "output_style": {"name": "default"},
        "cost": {"total_cost_usd": 1.25, "total_duration_ms": 45000,
                 "total_api_duration_ms": 2300, "total_lines_added": 156,
                 "total_lines_removed": 23},
        "context_window": {"total_input_tokens": 15234, "total_output_tokens": 4521,
                           "context_window_size": 200000, "used_percentage": 42,
                           "remaining_percentage": 58,
                           "current_usage": {"input_tokens": 8500, "output_tokens": 1200,
                                             "cache_creation_input_tokens": 5000,
                                             "cache_read_input_tokens": 2000}},
        "rate_limits": {"five_hour": {"used_percentage": 23.5, "resets_at": now + 7200},
                        "seven_day": {"used_percentage": 41.2, "resets_at": now + 86400}},
        "fast_mode": False, "exceeds_200k_tokens": False,
        "worktree": {"name": "main", "path": "/home/u/projets/alpha"},
    }


def leaf_paths(obj, prefix=()):
    """Every key path of a nested dict (inner nodes included)."""
    for key, value in obj.items():
        yield (*prefix, key)
        if isinstance(value, dict):
            yield from leaf_paths(value, (*prefix, key))


def without(obj: dict, path: tuple) -> dict:
    out = copy.deepcopy(obj)
    node = out
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return out


def replaced(obj: dict, path: tuple, value) -> dict:
    out = copy.deepcopy(obj)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


@pytest.fixture
def live_env(tmp_path) -> dict:
    env = dict(os.environ, BRAINLAB_CACHE_DIR=str(tmp_path / "cache"), COLUMNS="200",
               CLAUDE_CONFIG_DIR=str(tmp_path))  # transcripts under tmp_path/projects
    return env


def run(stdin: bytes | dict, env: dict, *args: str, cwd: Path | None = None):
    data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
    return subprocess.run([str(SCRIPT), "statusline", *args], input=data, env=env,
                          capture_output=True, cwd=cwd, timeout=60)


def transcript(tmp_path: Path, first_prompt: str = "brain work +sprint",
               context_tokens: int = 90_000, commits: int = 0) -> Path:
    path = tmp_path / "projects" / "-home-u-projets-alpha" / f"{SID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"type": "user", "sessionId": SID, "timestamp": "2026-04-01T10:00:00.000Z",
              "isSidechain": False, "uuid": "u0",
              "message": {"role": "user", "content": first_prompt}}]
    for i in range(commits):
        lines.append(assistant(SID, f"2026-04-01T10:0{i}:30.000Z", f"c{i}", f"rc{i}",
                               usage(1, 1, 0, 10), content=[tool_use(
                                   f"t{i}", "Bash", command=f"git commit -m 'step {i}'")]))
    lines.append(assistant(SID, "2026-04-01T10:09:00.000Z", "m1", "r1",
                           usage(context_tokens - 1000, 50, 0, 1000)))
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))
    return path


def state_of(env: dict) -> dict:
    folder = Path(env["BRAINLAB_CACHE_DIR"]) / "live" / "sessions"
    (state,) = [json.loads(p.read_text()) for p in folder.glob("*.json")]
    return state


def test_full_input_prints_every_segment(tmp_path, live_env):
    done = run(full_input(transcript(tmp_path)), live_env, "--plain")
    assert done.returncode == 0 and done.stderr == b""
    line = done.stdout.decode()
    assert line.count("\n") == 1
    for part in ("Opus 4.5", "ctx 42%", "$1.25", "today $1.25", "5h 24% ↻1h5", "work +sprint"):
        assert part in line, (part, line)  # resets in 2 h, less the seconds the run took
    folder = Path(live_env["BRAINLAB_CACHE_DIR"]) / "live"
    assert (folder.stat().st_mode & 0o777) == 0o700


@pytest.mark.parametrize("path", list(leaf_paths(full_input())), ids="/".join)
def test_every_field_missing_in_turn(tmp_path, live_env, path):
    done = run(without(full_input(transcript(tmp_path)), path), live_env)
    assert done.returncode == 0 and done.stderr == b""
    assert done.stdout.count(b"\n") == 1 and done.stdout.strip()


BAD_VALUES = [None, "x", [1], {"a": 1}, True, -1, 1e308, float("nan")]


@pytest.mark.parametrize("bad", BAD_VALUES, ids=repr)
def test_wrong_types_in_every_field_at_once(tmp_path, live_env, bad):
    base = full_input(transcript(tmp_path))
    data = base
    for path in sorted(leaf_paths(base), key=len, reverse=True):  # leaves first
        data = replaced(data, path, bad)
    done = run(json.dumps(data).encode(), live_env)
    assert done.returncode == 0 and done.stderr == b""
    assert done.stdout.count(b"\n") == 1 and done.stdout.strip()


def test_wrong_type_in_each_field_in_turn(tmp_path, monkeypatch):
    """The same library call the command makes, one field at a time (8 x 40 cases)."""
    from brainlab.live import statusline

    monkeypatch.setenv("BRAINLAB_CACHE_DIR", str(tmp_path / "cache"))
    base = full_input(transcript(tmp_path))
    for path in leaf_paths(base):
        for bad in BAD_VALUES:
            line = statusline.render(json.loads(json.dumps(replaced(base, path, bad))),
                                     plain=True, width=200)
            assert line and "\n" not in line, (path, bad)


def test_nulls_before_first_call_and_after_compact_use_the_transcript(tmp_path, live_env):
    data = full_input(transcript(tmp_path, context_tokens=90_000))
    data["context_window"].update(used_percentage=None, remaining_percentage=None,
                                  current_usage=None)
    data["rate_limits"] = None
    data["cost"]["total_cost_usd"] = None
    line = run(data, live_env, "--plain").stdout.decode()
    assert "ctx 45%" in line  # 90,000 tokens of the last call over the 200,000 window
    assert "5h" not in line and "$" not in line


@pytest.mark.parametrize("raw", [b"", b"\n", b"null", b"[]", b'"text"', b"{not json",
                                 b"\xff\xfe\x00garbage", random.Random(25).randbytes(1 << 20),
                                 b"{" + b" " * (1 << 20) + b"}"],
                         ids=["empty", "newline", "null", "list", "string", "broken",
                              "binary", "1MB-garbage", "1MB-spaces"])  # same ids on every worker
def test_garbage_prints_the_minimal_line(live_env, raw):
    done = run(raw, live_env)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"brainlab\n", b"")


def test_context_coloured_against_the_mode_budget(tmp_path, live_env):
    # SPEC §3.3: sprint's budget is 80%, acceptable with more than 5 commits
    data = full_input(transcript(tmp_path, first_prompt="brain work +sprint"))
    data["context_window"]["used_percentage"] = 85
    assert "\x1b[31mctx 85%" in run(data, live_env).stdout.decode()  # over: red
    data["context_window"]["used_percentage"] = 70
    assert "\x1b[32mctx 70%" in run(data, live_env).stdout.decode()
    assert "\x1b[" not in run(data, live_env, "--plain").stdout.decode()


def test_enough_commits_make_the_sprint_peak_acceptable(tmp_path, live_env):
    data = full_input(transcript(tmp_path, first_prompt="brain work +sprint", commits=6))
    data["context_window"]["used_percentage"] = 85
    assert "\x1b[32mctx 85%" in run(data, live_env).stdout.decode()
    assert state_of(live_env)["commits"] == 6


def test_prod_watch_line_and_undeclared_session(tmp_path, live_env):
    data = full_input(transcript(tmp_path, first_prompt="brain work +prod"))
    data["context_window"]["used_percentage"] = 65
    assert "\x1b[33mctx 65%" in run(data, live_env).stdout.decode()  # past the 60% watch
    other = dict(live_env, BRAINLAB_CACHE_DIR=str(tmp_path / "cache2"))
    data = full_input(transcript(tmp_path / "b", first_prompt="fix the login bug"))
    data["context_window"]["used_percentage"] = 95
    line = run(data, other).stdout.decode()
    assert "\x1b[32mctx 95%" in line and "+" not in line.split("|")[-1]


def test_segments_and_width(tmp_path, live_env):
    data = full_input(transcript(tmp_path))
    assert run(data, live_env, "--plain", "--segments", "cost,model").stdout == \
        b"$1.25 | Opus 4.5\n"
    narrow = run(data, dict(live_env, COLUMNS="24"), "--plain").stdout.decode().rstrip("\n")
    assert len(narrow) <= 24 and narrow.startswith("Opus 4.5")
    bad = run(data, live_env, "--segments", "nope")
    assert bad.returncode == 2 and bad.stderr.decode().count("Error") == 1


def test_state_advances_over_new_lines_only(tmp_path, live_env):
    path = transcript(tmp_path)
    data = full_input(path)
    run(data, live_env)
    assert state_of(live_env)["offset"] == path.stat().st_size
    with open(path, "a") as handle:  # a new call, then half of a line still being written
        handle.write(json.dumps(assistant(SID, "2026-04-01T10:10:00.000Z", "m2", "r2",
                                          usage(120_000, 5, 0, 0))) + "\n")
        complete = handle.tell()
        handle.write('{"type":"assistant","mess')
    data["context_window"]["used_percentage"] = None
    assert "ctx 60%" in run(data, live_env, "--plain").stdout.decode()
    state = state_of(live_env)
    assert state["offset"] == complete and state["context_tokens"] == 120_000


def test_long_transcript_first_seen_reads_head_and_tail_only(tmp_path, live_env):
    path = transcript(tmp_path)
    filler = json.dumps({"type": "progress", "data": "x" * 1000}) + "\n"
    with open(path, "a") as handle:
        handle.write(filler * 2000)  # 2 MB the status line must not read
        handle.write(json.dumps(assistant(SID, "2026-04-01T11:00:00.000Z", "m9", "r9",
                                          usage(150_000, 5, 0, 0))) + "\n")
    data = full_input(path)
    data["context_window"]["used_percentage"] = None
    assert "ctx 75%" in run(data, live_env, "--plain").stdout.decode()
    state = state_of(live_env)
    assert state["offset"] == path.stat().st_size and state["mode"] == "sprint"


def test_concurrent_runs_never_corrupt_the_state(tmp_path, live_env):
    path = transcript(tmp_path)
    data = json.dumps(full_input(path)).encode()
    procs = []
    for i in range(12):
        with open(path, "a") as handle:
            handle.write(json.dumps(assistant(SID, f"2026-04-01T12:{i:02d}:00.000Z", f"n{i}",
                                              f"q{i}", usage(1000 * (i + 1), 1, 0, 0))) + "\n")
        procs.append(subprocess.Popen([str(SCRIPT), "statusline"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, env=live_env))
    for i, proc in enumerate(procs):
        if i % 4 == 3:
            proc.kill()  # Claude Code cancels a run when the next one fires
        else:
            proc.communicate(data, timeout=60)
        proc.wait(timeout=60)
    done = run(data, live_env)  # one more run after them all
    assert done.returncode == 0
    state = state_of(live_env)  # valid JSON, and caught up with the file
    assert state["offset"] == path.stat().st_size and state["context_tokens"] == 12_000
    folder = Path(live_env["BRAINLAB_CACHE_DIR"]) / "live"
    snapshots = (folder / "limit_snapshots.jsonl").read_text().splitlines()
    assert all(json.loads(s)["session_id"] == SID for s in snapshots)


def test_limit_snapshots_loaded_by_the_next_ingest(tmp_path, live_env):
    path = transcript(tmp_path)
    data = full_input(path)
    run(data, live_env)
    run(data, live_env)  # same values: nothing appended
    data["rate_limits"]["five_hour"]["used_percentage"] = 31
    run(data, live_env)
    folder = Path(live_env["BRAINLAB_CACHE_DIR"]) / "live"
    assert len((folder / "limit_snapshots.jsonl").read_text().splitlines()) == 2
    with open(folder / "limit_snapshots.jsonl", "a") as handle:
        handle.write("not json\n")
    db = tmp_path / "store.duckdb"
    seeded_cache(Path(live_env["BRAINLAB_CACHE_DIR"]))  # the new store: the run's template
    done = subprocess.run([str(SCRIPT), "ingest", "claude", str(tmp_path / "projects"),
                           "--db", str(db)], env=live_env, capture_output=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT five_hour_pct, seven_day_pct, session_id FROM limit_snapshots"
                       " ORDER BY snapshot_at").fetchall() == [(23.5, 41.2, SID),
                                                               (31.0, 41.2, SID)]
    assert con.execute("SELECT window_kind, peak_used_pct, last_used_pct, snapshots"
                       " FROM usage_limits ORDER BY window_kind").fetchall() == [
        ("5h", 31.0, 31.0, 2), ("7d", 41.2, 41.2, 2)]
    assert con.execute("SELECT count(*) FROM ingest_errors WHERE source = 'limits'"
                       " AND line = 3").fetchone() == (1,)
    con.close()
    assert not list(folder.glob("limit_snapshots*"))  # taken
    shown = subprocess.run([str(SCRIPT), "limits", "--db", str(db)], env=live_env,
                           capture_output=True, text=True, cwd=tmp_path)
    assert shown.returncode == 0
    assert shown.stdout.splitlines()[0].split() == ["window", "started", "(UTC)", "resets",
                                                    "(UTC)", "peak", "last", "snapshots"]
    assert "31%" in shown.stdout and "41%" in shown.stdout
    # issue 25: the view is `usage limits`; `brainlab limits` stays as its alias
    usage = subprocess.run([str(SCRIPT), "usage", "limits", "--db", str(db)], env=live_env,
                           capture_output=True, text=True, cwd=tmp_path)
    assert usage.returncode == 0, usage.stderr
    assert usage.stdout == shown.stdout
    as_json = subprocess.run([str(SCRIPT), "usage", "limits", "--db", str(db), "--json",
                              "--limit", "1"], env=live_env, capture_output=True, text=True,
                             cwd=tmp_path)
    assert as_json.returncode == 0, as_json.stderr
    assert [(r["window_kind"], r["peak_used_pct"]) for r in json.loads(as_json.stdout)] in (
        [("5h", 31.0)], [("7d", 41.2)])
    wrong = subprocess.run([str(SCRIPT), "usage", "limits", "--db", str(db), "--project", "x"],
                           env=live_env, capture_output=True, text=True, cwd=tmp_path)
    assert wrong.returncode != 0 and wrong.stderr.startswith("Error: ")
    assert "Traceback" not in wrong.stderr


def test_today_adds_the_digest_sessions_of_the_same_day(tmp_path, live_env):
    folder = Path(live_env["BRAINLAB_CACHE_DIR"]) / "live"
    folder.mkdir(parents=True)
    today = time.strftime("%Y-%m-%d", time.gmtime())
    (folder / "digest.json").write_text(json.dumps({
        "day": today, "sessions": {"other": 2.0, SID: 0.5}, "coach": "coach (health)",
        "breath": "breath: noise"}))
    line = run(full_input(transcript(tmp_path)), live_env, "--plain").stdout.decode()
    # this session counts by its own live cost (1.25), never twice through the digest
    assert "today $3.25" in line and "coach (health) breath: noise" in line


def test_live_folder_follows_the_cache_rule(tmp_path, monkeypatch):
    """brainlab.live.cache spells brainlab.common.paths' cache rule without pathlib: same folder."""
    from brainlab.common import paths
    from brainlab.live import cache

    assert cache.CACHE_ENV == paths.CACHE_ENV
    monkeypatch.delenv(paths.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert Path(cache.live_dir(create=False)) == paths.cache_dir() / "live"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert Path(cache.live_dir(create=False)) == paths.cache_dir() / "live"


# --- issue 45: effort, the worktree's ticket, and fields newer or older versions lack -------
def test_effort_and_the_worktrees_ticket_are_shown_when_present(tmp_path, live_env):
    data = full_input(transcript(tmp_path))
    data["effort"] = {"level": "xhigh"}
    data["worktree"] = {"name": "T-042", "path": "/home/u/alpha/.claude/worktrees/T-042"}
    line = run(data, live_env, "--plain").stdout.decode()
    assert "Opus 4.5 | xhigh | ctx 42%" in line and "| ticket T-042 |" in line, line
    del data["worktree"]  # the ticket from the working directory, a folder below the worktree
    data["workspace"]["current_dir"] = "/home/u/alpha/.claude/worktrees/T-7/src"
    assert "ticket T-7" in run(data, live_env, "--plain").stdout.decode()
    alone = run(data, live_env, "--plain", "--segments", "effort,ticket").stdout.decode()
    assert alone == "xhigh | ticket T-7\n"


@pytest.mark.parametrize("missing", ["rate_limits", "effort", "worktree", "cost"])
def test_a_missing_field_drops_its_segment_silently(tmp_path, live_env, missing):
    """A field absent in some Claude Code versions (rate_limits, effort, worktree): the line
    goes on without its segment, nothing on stderr, exit 0."""
    data = full_input(transcript(tmp_path))
    data["effort"] = {"level": "high"}
    data["worktree"] = {"name": "T-1", "path": "/x/.claude/worktrees/T-1"}
    del data[missing]
    done = run(data, live_env, "--plain")
    line = done.stdout.decode()
    assert done.returncode == 0 and done.stderr == b"" and line.count("\n") == 1
    gone = {"rate_limits": "5h ", "effort": "| high |", "worktree": "ticket T-1", "cost": "$1.25"}
    assert gone[missing] not in line and "ctx 42%" in line, line
    for other, text in gone.items():
        if other not in (missing, "cost"):  # today's cost still shows $1.25 without cost
            assert text in line, (other, line)
