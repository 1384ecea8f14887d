"""`brainlab hooks install|uninstall` treat settings files as the user's (issue 46 item 6).

brainlab's entries are recognised by the marker word install writes and the whole command,
never a substring; every other byte is kept (layout, ``1e400``, escapes); the file is
written through its symlink via an exclusive temporary file; hostile files (FIFO, device,
huge, duplicate keys, comments, deep nesting, read-only, another user's) are refused at once
with one ``Error:`` line and left as they were, with no temporary file left behind. The
cases the issue names run the console script in a subprocess as a user runs it; the rest run
in this process through click's runner.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("brainlab")

# A user's entries that merely mention brainlab (issue 46): never brainlab's.
LOOKALIKES = """{
    "model": "opus",
    "cleanupPeriodDays": 1e400,
    "ratio": 1.0E+2, "zero": -0, "tiny": 1E-400, "big": 123456789012345678901234567890,
    "odd": "\\ud800 \\u00e9 \\/", "env": {"A":"1"},
    "hooks": {
        "Stop": [ {"hooks": [{"type": "command",
                              "command": "notify-send 'brainlab hook ingest finished'"}]} ],
        "SubagentStop": [{"matcher": "", "hooks": [
            {"type": "command", "command": "echo \\"$(date) brainlab hook ingest --db x\\" >> ~/log"},
            {"type": "command", "command": "brainlab hook ingest --db /x/s.duckdb | tee ~/log"}
        ]}]
    },
    "statusLine": {"type": "command", "command": "brainlab statusline | sed 's/|/:/g'"}
}
"""


@pytest.fixture
def env(tmp_path) -> dict:
    return dict(os.environ, HOME=str(tmp_path), CLAUDE_CONFIG_DIR=str(tmp_path / "claude"))


def cli(env, *args, cwd=None, timeout=60) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *map(str, args)], env=env, capture_output=True,
                          cwd=cwd, timeout=timeout)


def here(env, *args, cwd=None) -> subprocess.CompletedProcess:
    from click.testing import CliRunner

    from brainlab.cli import main

    with contextlib.chdir(cwd or os.getcwd()):
        result = CliRunner().invoke(main, list(map(str, args)), env=env)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout_bytes,
                                       result.stderr_bytes)


def refused(done: subprocess.CompletedProcess) -> str:
    """The one ``Error:`` line of a refusal (exit 1, nothing on stdout)."""
    lines = done.stderr.decode().splitlines()
    assert (done.returncode, done.stdout) == (1, b""), done
    assert len(lines) == 1 and lines[0].startswith("Error: settings file"), lines
    return lines[0]


def ours(value: dict) -> list[str]:
    """The commands of brainlab's marked entries in a settings object."""
    found = [h["command"] for groups in value.get("hooks", {}).values() for g in groups
             for h in g["hooks"] if h["command"].startswith("BRAINLAB_HOOK=1 ")]
    line = value.get("statusLine", {}).get("command", "")
    return found + ([line] if line.startswith("BRAINLAB_HOOK=1 ") else [])


def test_lookalikes_numbers_and_layout_are_kept_byte_for_byte(tmp_path, env):
    """A user's notify-send, logger and wrapper status line survive install and uninstall;
    ``1e400`` and the escapes stay as written; uninstall gives back the exact bytes."""
    path = tmp_path / "settings.json"
    path.write_text(LOOKALIKES)
    done = cli(env, "hooks", "install", "--settings", path, "--db", tmp_path / "s.duckdb")
    assert done.returncode == 0 and done.stderr == b"", done
    assert b"statusLine kept" in done.stdout
    text = path.read_text()
    assert "Infinity" not in text and '"cleanupPeriodDays": 1e400,' in text
    assert '"ratio": 1.0E+2, "zero": -0, "tiny": 1E-400, "big": 123456789012345678901234567890'\
        in text and '"odd": "\\ud800 \\u00e9 \\/"' in text
    assert text.startswith(LOOKALIKES.split('"Stop"')[0])  # everything before: as written
    value = json.loads(text)
    assert len(ours(value)) == 5  # four ingest events and session start; their status line kept
    assert value["statusLine"] == {"type": "command",
                                   "command": "brainlab statusline | sed 's/|/:/g'"}
    # new entries follow the file's 4-space layout
    assert '\n        "SessionEnd": [\n            {\n                "hooks": [' in text
    inode = path.stat().st_ino
    again = cli(env, "hooks", "install", "--settings", path, "--db", tmp_path / "s.duckdb")
    assert b"already installed" in again.stdout and path.stat().st_ino == inode  # not rewritten
    gone = cli(env, "hooks", "uninstall", "--settings", path)
    assert gone.returncode == 0 and path.read_text() == LOOKALIKES
    assert b"nothing of brainlab" in here(env, "hooks", "uninstall", "--settings", path).stdout
    assert path.stat().st_ino != inode and path.read_text() == LOOKALIKES


def test_older_releases_entries_are_removed_and_upgraded(tmp_path, env):
    """The exact commands releases before the marker wrote (console script, -S launcher)."""
    old = {"hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]},
                 {"hooks": [{"type": "command", "timeout": 10, "command":
                             "/old/venv/bin/python3 -S '/old/src dir/brainlab/live/launch.py'"
                             " hook ingest --db /data/brainlab.duckdb"}]}],
        "SessionEnd": [{"hooks": [{"type": "command",
                                   "command": "/old/bin/brainlab hook ingest --db /data/b.db"}]}],
        "SessionStart": [{"hooks": [
            {"type": "command", "command": "/old/bin/brainlab hook session-start --db /d/b"},
            {"type": "command", "command": "~/bin/mine.sh"}]}]},
        "statusLine": {"type": "command", "command": "brainlab statusline", "padding": 0}}
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(old, indent=2))
    assert here(env, "hooks", "uninstall", "--settings", path).returncode == 0
    assert json.loads(path.read_text()) == {"hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": "~/bin/mine.sh"}]}]}}
    path.write_text(json.dumps(old, indent=2))
    assert here(env, "hooks", "install", "--settings", path).returncode == 0
    value = json.loads(path.read_text())
    commands = [h["command"] for groups in value["hooks"].values() for g in groups
                for h in g["hooks"]]
    assert not any(c.startswith(("/old/", "brainlab ")) for c in commands)
    assert len(ours(value)) == 6 and "notify-send done" in commands and "~/bin/mine.sh" in commands


def test_symlinked_settings_written_through_the_link_dangling_refused(tmp_path, env):
    """A dotfiles manager's link stays a link and its target gets the change (user scope)."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude-settings.json"
    real.write_text('{\n  "model": "opus"\n}\n')
    link = tmp_path / "claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    done = cli(env, "hooks", "install", cwd=tmp_path)
    assert done.returncode == 0 and f"in {real}".encode() in done.stdout, done
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert len(ours(json.loads(real.read_text()))) == 6
    assert sorted(p.name for p in dotfiles.iterdir()) == ["claude-settings.json"]
    assert here(env, "hooks", "uninstall").returncode == 0
    assert link.is_symlink() and real.read_text() == '{\n  "model": "opus"\n}\n'

    link.unlink()
    link.symlink_to(tmp_path / "nowhere" / "settings.json")
    assert "does not exist" in refused(cli(env, "hooks", "install", cwd=tmp_path))
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


def test_planted_symlink_at_a_temporary_name_cannot_redirect_the_write(tmp_path, env):
    """A cloned repository's .claude/ holds links at every name a writer could predict: the
    old ``.settings.json.<pid>.tmp`` for this very process (the shell plants it, then execs
    brainlab under the same pid), the usual editors' names."""
    project = tmp_path / "clone"
    claude = project / ".claude"
    claude.mkdir(parents=True)
    (claude / "settings.json").write_text('{"permissions": {"allow": []}}\n')
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    names = [".settings.json.tmp", "settings.json.tmp", "settings.json~", ".settings.json.swp",
             "settings.json.new"]
    for name in names:
        (claude / name).symlink_to(victim)
    done = subprocess.run(["sh", "-c", f'ln -s {victim} ".claude/.settings.json.$$.tmp" && exec'
                           f' {SCRIPT} hooks install --scope project'], env=env, cwd=project,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done
    assert victim.read_text() == "precious\n"
    planted = [p.name for p in claude.iterdir() if p.is_symlink()]
    assert len(planted) == len(names) + 1 and all(os.readlink(claude / n) == str(victim)
                                                  for n in planted)
    assert sorted(p.name for p in claude.iterdir()) == sorted([*planted, "settings.json"])
    assert len(ours(json.loads((claude / "settings.json").read_text()))) == 6


def test_fifo_and_device_refused_at_once(tmp_path, env):
    """`--settings` naming a FIFO no one writes, or /dev/zero: one line, no hang, no read."""
    fifo = tmp_path / "settings.json"
    os.mkfifo(fifo)
    for target in (fifo, Path("/dev/zero")):
        try:
            done = cli(env, "hooks", "install", "--settings", target, timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"hooks install --settings {target} hung")
        assert "not a regular file" in refused(done)


def _hostile(tmp_path) -> dict[str, bytes]:
    return {
        "duplicate key": b'{"model": "a", "model": "b"}',
        "duplicate hooks": b'{"hooks": {}, "hooks": {"Stop": []}}',
        "line comment": b'{\n  // mine\n  "model": "a"\n}\n',
        "block comment": b'{"model": "a"} /* end */',
        "trailing comma": b'{"model": "a",}',
        "NaN": b'{"n": NaN}',
        "Infinity": b'{"n": -Infinity}',
        "deep inside": b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        "deep list": b"[" * 100000 + b"]" * 100000,
        "300 deep inside": b'{"a": {"b": ' + b"[" * 300 + b"]" * 300 + b"}}",
        "NaN nested": b'{"permissions": {"allow": [NaN]}}',
        "duplicate nested": b'{"env": {"A": "1", "A": "2"}}',
        "trailing comma nested": b'{"env": {"A": "1",}}',
        "comment nested": b'{"env": {"A": "1" /* x */}}',
        "comment in a handler": b'{"hooks": {"Stop": [{"hooks": [{"type": "command" // x\n}]}]}}',
        "array": b"[1, 2]",
        "string": b'"hooks"',
        "null": b"null",
        "two values": b"{} {}",
        "raw control": b'{"a": "\x1b[2J"}',
        "bad escape": b'{"a": "\\x41"}',
        "not utf-8": b'{"a": "\xff"}',
        "raw surrogate": b'{"a": "\xed\xa0\x80"}',
        "hooks a list": b'{"hooks": []}',
        "event an object": b'{"hooks": {"Stop": {}}}',
        "over 1 MiB": b'{"a": "' + b"x" * (1 << 20) + b'"}',
        "single quotes": b"{'a': 1}",
        "BOM then junk": b"\xef\xbb\xbf{oops}",
        "hooks null": b'{"hooks": null}',
        "event key a lone surrogate": b'{"hooks": {"\\ud800\\u001b": {}}}',
        "form feed": b'{\x0c"a": 1}',
        "line separator": '{"a": 1}\u2028'.encode(),
        "plus number": b'{"a": +1}',
        "leading zero": b'{"a": 01}',
    }


def test_hostile_settings_refused_with_one_line_and_left_as_they_were(tmp_path, env):
    folder = tmp_path / "cases"
    folder.mkdir()
    for name, data in _hostile(tmp_path).items():
        path = folder / "settings.json"
        path.write_bytes(data)
        for command in ("install", "uninstall"):
            line = refused(here(env, "hooks", command, "--settings", path))
            assert "bug" not in line and "\x1b" not in line, (name, line)
            assert path.read_bytes() == data, name
            assert os.listdir(folder) == ["settings.json"], name  # no temporary file


def test_accepted_oddities_are_kept_bom_surrogate_escape_crlf_tabs(tmp_path, env):
    """JSON readers accept these; brainlab keeps them and adds its entries in their style."""
    cases = {
        "bom": b'\xef\xbb\xbf{\n  "model": "a"\n}\n',
        "surrogate": b'{"statusLine": {"type": "command", "command": "x \\ud800\\u001b"}}',
        "crlf": b'{\r\n  "model": "a"\r\n}\r\n',
        "tabs": b'{\n\t"hooks": {\n\t\t"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]'
                b'\n\t}\n}',
        "empty": b"",
        "spaces": b" \n",
        "empty object": b"{}",
        "long integer": b'{"big": ' + b"9" * 5000 + b', "deep": ' + b"[" * 150 + b"]" * 150 + b"}",
    }
    for name, data in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_bytes(data)
        done = here(env, "hooks", "install", "--settings", path)
        assert done.returncode == 0 and done.stderr == b"", (name, done)
        text = path.read_bytes()
        value = json.loads(text.decode("utf-8-sig"), parse_int=str)  # a 5000-digit int
        assert len(ours(value)) == (5 if name == "surrogate" else 6), name
        if name == "surrogate":  # the user's status line kept, printed inert in the note
            assert b"\\ud800\\x1b" in done.stdout or b"\\\\ud800" in done.stdout, done.stdout
            assert b"\x1b" not in done.stdout
        assert here(env, "hooks", "uninstall", "--settings", path).returncode == 0
        after = path.read_bytes()
        if name in ("empty", "spaces"):
            assert after == b"{}\n", name
        else:
            assert after == data, name
    odd = tmp_path / "a\x1b[31m\u202e.json"  # a name that would colour or flip the terminal
    for args in (("install",), ("install", "--dry-run"), ("uninstall",)):
        done = here(env, "hooks", *args, "--settings", odd)
        assert done.returncode == 0 and b"a\\x1b[31m\\u202e.json" in done.stdout, done
        assert b"\x1b" not in done.stdout and "\u202e".encode() not in done.stdout
    tabs, crlf = tmp_path / "tabs.json", tmp_path / "crlf.json"
    for path in (tabs, crlf):
        assert here(env, "hooks", "install", "--settings", path).returncode == 0
    assert b'\n\t\t"SubagentStop": [\n\t\t\t{\n\t\t\t\t"hooks": [' in tabs.read_bytes()
    assert b"\n" not in crlf.read_bytes().replace(b"\r\n", b"")


def test_read_only_and_other_users_files_refused(tmp_path, env):
    path = tmp_path / "settings.json"
    path.write_text('{"model": "a"}')
    path.chmod(0o444)
    assert "read-only" in refused(here(env, "hooks", "install", "--settings", path))
    assert path.read_text() == '{"model": "a"}'
    path.chmod(0o644)
    twin = tmp_path / "twin.json"
    os.link(path, twin)
    assert "hard links" in refused(here(env, "hooks", "install", "--settings", path))
    twin.unlink()
    if os.geteuid() == 0:  # root can give the file away and see it refused
        os.chown(path, 65534, 65534)
        assert "another user" in refused(here(env, "hooks", "install", "--settings", path))
        assert path.read_text() == '{"model": "a"}' and path.stat().st_uid == 65534
    assert os.listdir(tmp_path) == ["settings.json"]


def test_killed_between_write_and_replace_leaves_no_temporary_file(tmp_path, env):
    """SIGTERM between writing the temporary file and the replace: removed, file as it was;
    SIGKILL: the next run removes what the killed one left."""
    path = tmp_path / "settings.json"
    path.write_text('{"model": "a"}')
    term = cli(dict(env, BRAINLAB_TEST_SETTINGS_KILL="TERM"), "hooks", "install",
               "--settings", path)
    assert "interrupted (SIGTERM)" in refused(term)
    assert os.listdir(tmp_path) == ["settings.json"] and path.read_text() == '{"model": "a"}'
    kill = cli(dict(env, BRAINLAB_TEST_SETTINGS_KILL="KILL"), "hooks", "install",
               "--settings", path)
    assert kill.returncode == -signal.SIGKILL and path.read_text() == '{"model": "a"}'
    left = [p for p in tmp_path.iterdir() if p.name != "settings.json"]
    assert len(left) == 1 and left[0].name.endswith(".brainlab-tmp")
    os.utime(left[0], (1, 1))  # as old as a crash long ago
    assert here(env, "hooks", "install", "--settings", path).returncode == 0
    assert os.listdir(tmp_path) == ["settings.json"] and len(ours(json.loads(
        path.read_text()))) == 6


def test_every_brainlab_entry_removed_in_one_pass_users_interleaved_kept(tmp_path, env):
    """Hundreds of brainlab's entries (a loop of installs by an older tool) between the user's,
    and a group mixing both: uninstall removes exactly brainlab's, whatever their position."""
    legacy = {"type": "command", "command": "/old/bin/brainlab hook ingest --db /d/s.duckdb"}
    marked = {"type": "command", "command": "BRAINLAB_HOOK=1 /x/python -S /x/launch.py"
              " hook ingest --db /d/s.duckdb", "timeout": 10}
    user = [{"hooks": [{"type": "command", "command": f"mine {i}"}]} for i in range(300)]
    stop = []
    for i, group in enumerate(user):
        stop += [{"hooks": [legacy if i % 2 else marked]}, group]
    stop.append({"matcher": "", "hooks": [marked, {"type": "command", "command": "keep"},
                                          legacy]})
    stop += [{"hooks": [marked]}] * 50
    value = {"hooks": {"Stop": stop, "SessionEnd": [{"hooks": [legacy]}] * 3}, "model": "a"}
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(value, indent=1))
    assert here(env, "hooks", "uninstall", "--settings", path).returncode == 0
    assert json.loads(path.read_text()) == {"hooks": {"Stop": [*user, {"matcher": "", "hooks": [
        {"type": "command", "command": "keep"}]}]}, "model": "a"}


def test_install_again_leaves_the_file_alone_wherever_the_user_moved_the_entries(tmp_path, env):
    """After install the user adds keys after brainlab's, a group before its own, re-indents:
    the same install changes nothing; another --db replaces brainlab's entries only."""
    path = tmp_path / "settings.json"
    path.write_text('{"model": "x"}')
    db = tmp_path / "s.duckdb"
    assert here(env, "hooks", "install", "--settings", path, "--db", db).returncode == 0
    value = json.loads(path.read_text())
    hooks = value.pop("hooks")
    hooks["Stop"].insert(0, {"hooks": [{"type": "command", "command": "mine"}]})
    value = {"theme": "dark", **value, "hooks": hooks, "after": [1e400]}
    path.write_text(json.dumps(value, indent=3).replace("Infinity", "1e400"))
    moved = path.read_bytes()
    again = here(env, "hooks", "install", "--settings", path, "--db", db)
    assert again.stdout.endswith(b"already installed; nothing changed\n")
    assert path.read_bytes() == moved
    other = here(env, "hooks", "install", "--settings", path, "--db", tmp_path / "t.duckdb")
    assert other.stdout.startswith(b"installed in") and b"1e400" in path.read_bytes()
    value = json.loads(path.read_text())
    assert len(ours(value)) == 6 and all("t.duckdb" in c for c in ours(value)[:5])
    assert value["hooks"]["Stop"][0] == {"hooks": [{"type": "command", "command": "mine"}]}
    assert list(value) == ["theme", "model", "hooks", "after", "statusLine"]


THEIRS = {"model": "opus", "permissions": {"allow": ["Bash(npm run test:*)"], "deny": []},
          "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
                    "PreToolUse": [{"matcher": "Bash", "hooks": [
                        {"type": "command", "command": "~/bin/guard.sh", "timeout": 5}]}]},
          "env": {}, "n": [1.5, -2, 0]}
STYLES = {"compact": dict(separators=(",", ":")), "one line": {}, "indent 0": dict(indent=0),
          "indent 1": dict(indent=1), "indent 4": dict(indent=4), "tabs": dict(indent="\t"),
          "spaced": dict(indent=2, separators=(" , ", " : "))}


@pytest.mark.parametrize("style", STYLES)
def test_every_layout_gets_valid_json_with_the_same_values_and_comes_back(tmp_path, style):
    """The general rule, on the library: whatever the layout, install gives valid JSON whose
    values are the user's plus brainlab's, and uninstall gives back the same bytes."""
    from brainlab.live.settings import apply, plan

    for name, value in (("theirs", THEIRS), ("no hooks", {"model": "a"}), ("empty", {})):
        text = json.dumps(value, **STYLES[style])
        for newline in ("\n", "\r\n"):
            path = tmp_path / "settings.json"
            original = (text.replace("\n", newline) + newline).encode()
            path.write_bytes(original)
            apply(plan(path, True, tmp_path / "s.duckdb", program="/opt/brainlab"))
            installed = json.loads(path.read_bytes())
            mine = ours(installed)
            assert len(mine) == 6 and all(c.startswith("BRAINLAB_HOOK=1 /opt/brainlab ")
                                          for c in mine), (style, name)
            for key, theirs in value.items():
                if key != "hooks":
                    assert installed[key] == theirs, (style, name, key)
            for event, groups in value.get("hooks", {}).items():
                assert installed["hooks"][event][:len(groups)] == groups, (style, name)
            if newline == "\r\n":
                assert b"\n" not in path.read_bytes().replace(b"\r\n", b""), (style, name)
            apply(plan(path, False, tmp_path / "s.duckdb"))
            assert path.read_bytes() == original, (style, name, newline)
