"""``brainlab hooks install|uninstall``: brainlab's entries in Claude Code's settings file.

Claude Code reads ``hooks`` (event -> list of ``{matcher?, hooks: [{type: command, command,
timeout}]}``) and ``statusLine`` (``{type: command, command, padding}``) from settings files
of three scopes: user (``~/.claude/settings.json``, or ``$CLAUDE_CONFIG_DIR/settings.json``),
project (``.claude/settings.json``) and local (``.claude/settings.local.json``). Installing
adds one handler per event (the ingest on Stop, SubagentStop, SessionEnd and PreCompact, the
boot context on SessionStart) and the status line; uninstalling removes them.

The file is the user's (issue 46 item 6):

- **The marker.** Every command install writes starts with the word :data:`MARKER`
  (``BRAINLAB_HOOK=1``, a shell variable assignment: inert, and Claude Code runs hook and
  status line commands through a shell), and brainlab's entries are recognised by the whole
  command: the marker first, then plain words only, quoted exactly as
  :func:`shlex.quote` quotes them (no pipe, redirection, ``;`` or other shell syntax). A
  user's ``notify-send 'brainlab hook ingest finished'``, an ``echo ... >> log`` logger, a
  wrapper status line that pipes brainlab's output (even one made from brainlab's own line)
  are never brainlab's. Not a key in the hook object: Claude Code's settings schema allows
  no other keys there (SchemaStore's ``claude-code-settings.json``: ``additionalProperties:
  false``; Claude Code drops or warns about them), and not the launcher's text, which
  changes between releases. Entries written by releases before the marker (``<brainlab>
  hook ingest|session-start --db PATH``, ``<brainlab> statusline``, ``<python> -S
  .../brainlab/live/launch.py hook ingest --db PATH | statusline``) are recognised by that
  exact word list, so uninstall and upgrade remove them.
- **Bytes kept.** The text is edited in place (:mod:`brainlab.common.jsonedit`): every byte
  that is not brainlab's entry stays as written (layout, key order, ``1e400``, escapes, a
  BOM); new entries follow the file's indentation. Nothing to change: the file is not
  written.
- **How it is written.** Through a symlink to its target (a dotfiles manager's link stays a
  link; a dangling link is refused), via :func:`tempfile.mkstemp` in the target's folder
  (``O_EXCL``, an unpredictable name: a symlink planted at any name cannot redirect the
  write), flushed, then :func:`os.replace`. The temporary file is removed on any failure, on
  SIGTERM/SIGHUP/SIGINT; one left by a SIGKILL is removed by the next run. A file owned by
  another user or without its owner's write bit is refused, not replaced.
- **Refused at once with one ``Error:`` line, the file untouched**: what is not a regular
  file (FIFO, device, folder; never opened in a blocking way), more than :data:`MAX_BYTES`,
  not UTF-8, not a JSON object, JSON that readers disagree on (a key twice) or that is not
  JSON (comments, trailing commas, ``NaN``: Claude Code's settings are JSON, not JSONC), a
  ``hooks`` that is not an object of lists.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import shutil
import signal
import stat
import sys
import tempfile
import time
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from brainlab.common import jsonedit
from brainlab.common.errors import ConfigError
from brainlab.common.plaintext import visible

INGEST_EVENTS = ("Stop", "SubagentStop", "SessionEnd", "PreCompact")
START_EVENT = "SessionStart"
HOOK_TIMEOUT = 10  # seconds; the hook returns in well under one (the ingest is detached)
MARKER = "BRAINLAB_HOOK=1"  # the first word of every command install writes
MAX_BYTES = 1 << 20  # 1 MiB: Claude Code's settings files are a few kB
TMP_SUFFIX = ".brainlab-tmp"
STALE_TMP_SECONDS = 600  # a temporary file of ours this old was left by a killed run
KILL_ENV = "BRAINLAB_TEST_SETTINGS_KILL"  # tests: TERM or KILL between write and replace
_ARGS = (("hook", "ingest", "--db"), ("hook", "session-start", "--db"))


@dataclass
class Change:
    """What an install or uninstall does to one settings file."""

    path: Path  # as named by the user
    target: Path  # the file written: ``path``, or its symlink's target
    before: str | None  # None: the file does not exist
    after: str | None  # None: it still does not
    note: str | None = None  # e.g. a status line of the user's, kept
    read_stat: os.stat_result | None = None

    @property
    def changed(self) -> bool:
        """Whether the file's text changes."""
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff of the change (empty when nothing changes); control characters escaped."""
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True), (self.after or "").splitlines(keepends=True),
            fromfile=str(self.path), tofile=str(self.path))
        return "".join(shown(line.rstrip("\r\n"), keep_tabs=True) + "\n" for line in lines)


def settings_path(scope: str, cwd: Path | None = None) -> Path:
    """The settings file of ``scope`` (user, project or local)."""
    if scope == "user":
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return (Path(base).expanduser() if base else Path.home() / ".claude") / "settings.json"
    folder = (cwd or Path.cwd()) / ".claude"
    if scope == "project":
        return folder / "settings.json"
    if scope == "local":
        return folder / "settings.local.json"
    raise ConfigError(f"unknown scope {scope!r}: use user, project or local")


def brainlab_command() -> str:
    """The absolute path of the running ``brainlab`` script (Claude Code's PATH may differ)."""
    found = shutil.which("brainlab")
    if found:
        return str(Path(found).resolve())
    script = Path(sys.argv[0])
    return str(script.resolve()) if script.name.startswith("brainlab") else "brainlab"


def launcher() -> str:
    """``<python> -S <brainlab/live/launch.py>``: the status line and ingest hook without site."""
    return f"{shlex.quote(sys.executable)} -S {shlex.quote(str(Path(__file__).with_name('launch.py')))}"


def commands(db: Path, program: str | None = None) -> dict[str, str]:
    """The three commands brainlab writes: ingest, session-start, statusline.

    The two that run after every message go through :func:`launcher` (no ``site``: a third
    of the time); the session-start hook reads the store, so it runs the console script.
    """
    exe = shlex.quote(program or brainlab_command())
    fast = launcher() if program is None else exe
    store = shlex.quote(str(Path(db).expanduser().resolve()))
    return {"ingest": f"{fast} hook ingest --db {store}",
            "session-start": f"{exe} hook session-start --db {store}",
            "statusline": f"{fast} statusline"}


def marked(command: str) -> str:
    """``command`` as install writes it: :data:`MARKER` first."""
    return f"{MARKER} {command}"


def _words(command: str) -> list[str] | None:
    """The command's words when it is plain words quoted as :func:`shlex.quote` quotes them."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words if words and " ".join(map(shlex.quote, words)) == command else None


def _legacy(words: list[str]) -> bool:
    """Whether ``words`` are a command written by a release before :data:`MARKER`."""
    for program, args in ((words[:1], words[1:]), (words[:3], words[3:])):
        if len(program) == 1 and Path(program[0]).name not in ("brainlab", "brainlab.exe"):
            continue
        if len(program) == 3 and (program[1] != "-S" or Path(program[2]).parts[-3:]
                                  != ("brainlab", "live", "launch.py")):
            continue
        if args == ["statusline"] or (len(args) == 4 and tuple(args[:3]) in _ARGS):
            return True
    return False


def is_ours(handler) -> bool:
    """Whether a hook handler or status line is one brainlab wrote (see the module's doc)."""
    if not isinstance(handler, dict) or handler.get("type") != "command" \
            or not isinstance(handler.get("command"), str):
        return False
    command = handler["command"]
    if not command.startswith(MARKER + " ") and "brainlab" not in command:
        return False  # (a long command of the user's is not split word by word)
    words = _words(command)
    if words is None:
        return False
    return len(words) > 1 if words[0] == MARKER else _legacy(words)


# --- reading ------------------------------------------------------------------------------------
def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def resolve(path: Path) -> Path:
    """The file to read and write: ``path``, or the final target of its symlink(s)."""
    if not os.path.islink(path):
        return path
    target = Path(os.path.realpath(path))
    if not target.exists():
        raise ConfigError(f"settings file {path} is a symlink to {target}, which does not exist"
                          " (or the links loop); left untouched: create the target, or remove"
                          " the link")
    return target


def read(path: Path, target: Path) -> tuple[str | None, os.stat_result | None]:
    """The file's text and its stat, refusing at once what is not a small regular file."""
    def refuse(why: str) -> ConfigError:
        return ConfigError(f"settings file {path} {why}; left untouched: pass a JSON file"
                           " with --settings")

    try:
        first = os.stat(target)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc.strerror}") from None
    if not stat.S_ISREG(first.st_mode):  # never opened: a FIFO would block, a device not end
        raise refuse(f"is {_kind(first.st_mode)}, not a regular file")
    if first.st_size > MAX_BYTES:
        raise refuse(f"is {first.st_size} bytes, more than a settings file's"
                     f" {MAX_BYTES // (1 << 20)} MiB")
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)  # what was opened, should the name have changed since
        if not stat.S_ISREG(st.st_mode):
            raise refuse(f"is {_kind(st.st_mode)}, not a regular file")
        chunks, size = [], 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, MAX_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if size > MAX_BYTES:
        raise refuse(f"holds more than a settings file's {MAX_BYTES // (1 << 20)} MiB")
    try:
        return b"".join(chunks).decode("utf-8"), st
    except UnicodeDecodeError as exc:
        raise ConfigError(f"settings file {path} is not UTF-8 text (byte {exc.start}); left"
                          " untouched: fix it, or pass another file with --settings") from None


def _structural(path: tuple) -> bool:
    """Whether brainlab needs the spans of this object's or array's items.

    The top, "hooks", its events, their groups and the groups' "hooks"; the rest is read whole.
    """
    if not path:
        return True
    shape = ("hooks", None, "*", "hooks")
    return len(path) <= 4 and all(want is None or got == want
                                  for got, want in zip(path, shape, strict=False))


def _parse(path: Path, text: str) -> jsonedit.Node | None:
    """The text's JSON with spans, checked to be an object with a usable ``hooks``."""
    try:
        root = jsonedit.parse(text, _structural)
    except jsonedit.JSONTextError as exc:
        raise ConfigError(f"settings file {path} is not valid JSON ({exc}); left untouched:"
                          " fix it, or pass another file with --settings") from None
    if root is None:
        return None
    if root.kind != "object":
        kind = {"array": "list", "string": "str", "number": "number"}.get(
            root.kind, type(root.value).__name__ if root.value is not None else "null")
        raise ConfigError(f"settings file {path} holds a JSON {kind}, not an object; left"
                          " untouched: fix it, or pass --settings")
    _, hooks = root.member("hooks")
    if hooks is not None:
        if hooks.value.kind != "object":
            raise ConfigError(f"settings file {path}: \"hooks\" is not an object; left"
                              " untouched: fix it, or pass --settings")
        for event in hooks.value.items:
            if event.value.kind != "array":
                raise ConfigError(f"settings file {path}: hooks.{shown(event.key)} is not a"
                                  " list; left untouched: fix it, or pass --settings")
    return root


# --- editing -------------------------------------------------------------------------------------
def _removals(root: jsonedit.Node) -> list[jsonedit.Edit]:
    """Edits that remove brainlab's entries, in one pass over the parsed text.

    brainlab's handlers, the groups, events and ``hooks`` they were the only entries of, and
    brainlab's status line.
    """
    edits: list[jsonedit.Edit] = []
    drop_root: set[int] = set()
    index, hooks = root.member("hooks")
    if hooks is not None and hooks.value.kind == "object":
        drop_events: set[int] = set()
        for e, event in enumerate(hooks.value.items):
            groups = event.value
            if groups.kind != "array":
                continue
            drop_groups: set[int] = set()
            group_edits: list[jsonedit.Edit] = []
            for g, group in enumerate(groups.items):
                inner = group.member("hooks")[1] if group.kind == "object" else None
                if inner is None or inner.value.kind != "array":
                    continue
                mine = {h for h, handler in enumerate(inner.value.items)
                        if is_ours(handler.plain())}
                if mine and len(mine) == len(inner.value.items):
                    drop_groups.add(g)
                else:
                    group_edits += jsonedit.removal(inner.value, mine)
            if drop_groups and len(drop_groups) == len(groups.items):
                drop_events.add(e)
            else:
                edits += group_edits + jsonedit.removal(groups, drop_groups)
        if drop_events and len(drop_events) == len(hooks.value.items):
            drop_root.add(index)
        else:
            edits += jsonedit.removal(hooks.value, drop_events)
    index, line = root.member("statusLine")
    if line is not None and is_ours(line.value.plain()):
        drop_root.add(index)
    return edits + jsonedit.removal(root, drop_root)


def _handler(command: str) -> dict:
    return {"type": "command", "command": marked(command), "timeout": HOOK_TIMEOUT}


def _wanted(cmds: dict[str, str]) -> tuple[dict[str, dict], dict]:
    """The group install adds on each event, and its status line."""
    wanted = {event: {"hooks": [_handler(cmds["ingest"])]} for event in INGEST_EVENTS}
    wanted[START_EVENT] = {"hooks": [_handler(cmds["session-start"])]}
    return wanted, {"type": "command", "command": marked(cmds["statusline"]), "padding": 0}


def _already(text: str, root: jsonedit.Node, cmds: dict[str, str]) -> bool:
    """Whether brainlab's entries in the file are exactly what install would write.

    Each event holds one group of brainlab's equal to the one install adds, the status line is
    brainlab's own (or the user's, kept), and no other entry of brainlab's is anywhere: then
    install leaves the file as it is, wherever the user moved the entries.
    """
    def value(node: jsonedit.Node) -> str:
        return json.dumps(json.loads(text[node.start:node.end]), sort_keys=True)

    found = []
    hooks = root.member("hooks")[1]
    for event in hooks.value.items if hooks is not None else ():
        for group in event.value.items:
            inner = group.member("hooks")[1] if group.kind == "object" else None
            if inner is not None and inner.value.kind == "array" and any(
                    is_ours(handler.plain()) for handler in inner.value.items):
                found.append((event.key, value(group)))
    wanted, line = _wanted(cmds)
    expected = [(event, json.dumps(group, sort_keys=True)) for event, group in wanted.items()]
    kept = root.member("statusLine")[1]
    if kept is not None and is_ours(kept.value.plain()):
        found.append(("statusLine", value(kept.value)))
    if kept is None or is_ours(kept.value.plain()):
        expected.append(("statusLine", json.dumps(line, sort_keys=True)))
    return sorted(found) == sorted(expected)


def _additions(text: str, root: jsonedit.Node, cmds: dict[str, str]
               ) -> tuple[list[jsonedit.Edit], str | None]:
    """Edits that add brainlab's handlers and status line; a note when the user's line stays."""
    wanted, line = _wanted(cmds)
    unit = jsonedit.indent_unit(text, root)
    edits, top = [], []
    hooks = root.member("hooks")[1]
    if hooks is None:
        top.append(("hooks", {event: [group] for event, group in wanted.items()}))
    else:
        missing = []
        for event, group in wanted.items():
            groups = hooks.value.member(event)[1]
            if groups is None:
                missing.append((event, [group]))
            else:
                edits.append(jsonedit.addition(text, groups.value, [group], unit))
        if missing:
            edits.append(jsonedit.addition(text, hooks.value, missing, unit))
    if root.member("statusLine")[1] is None:
        top.append(("statusLine", line))
    if top:
        edits.append(jsonedit.addition(text, root, top, unit))
    return edits, _note(root, cmds)


def _note(root: jsonedit.Node, cmds: dict[str, str]) -> str | None:
    """What to say when the file runs a status line of the user's (kept)."""
    kept = root.member("statusLine")[1]
    if kept is None or is_ours(kept.value.plain()):
        return None
    return ("statusLine kept: the settings already run another status line"
            f" ({shown(repr(kept.value.plain()))}); set it to"
            f" `{marked(cmds['statusline'])}` to use brainlab's")


def shown(text: str, keep_tabs: bool = False) -> str:
    """``text`` safe to print: control characters and lone surrogates as escapes."""
    return visible(text.encode("utf-8", "backslashreplace").decode("utf-8"), keep_tabs)


def plan(path: Path, install: bool, db: Path, program: str | None = None) -> Change:
    """The change an install (or uninstall) makes to ``path``, without writing it."""
    path = Path(path)
    target = resolve(path)
    before, st = read(path, target)
    root = _parse(path, before or "")
    if install and root is not None and _already(before, root, commands(db, program)):
        return Change(path, target, before, before, _note(root, commands(db, program)), st)
    text = jsonedit.splice(before, _removals(root)) if root is not None else before
    note = None
    if install:
        root = _parse(path, text or "")
        if root is None:  # no file, or only white space
            text = jsonedit.render({}, "  ", "") + "\n"
            root = _parse(path, text)
        edits, note = _additions(text, root, commands(db, program))
        text = jsonedit.splice(text, edits)
    if text != before and text is not None:  # never write what is not a JSON object
        try:
            valid = _parse(path, text) is not None
        except ConfigError:
            valid = False
        if not valid:
            raise ConfigError(f"settings file {path}: brainlab's edit would not be a JSON"
                              " object; left untouched (a brainlab bug: please report it)")
    return Change(path, target, before, text, note, st)


# --- writing --------------------------------------------------------------------------------------
class _Interrupted(Exception):
    pass


@contextmanager
def _signals_raise():
    """SIGTERM, SIGHUP and SIGINT raise inside the block (so ``finally`` cleans up)."""
    def handler(signum, frame):
        raise _Interrupted(signal.Signals(signum).name)

    saved = {}
    try:
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            saved[signum] = signal.signal(signum, handler)
    except ValueError:  # not the main thread: no handlers to set
        pass
    try:
        yield
    finally:
        for signum, old in saved.items():
            signal.signal(signum, old)


def _sweep(target: Path) -> None:
    """Remove temporary files of ours that a killed run left beside ``target``."""
    now = time.time()
    try:
        names = os.listdir(target.parent)
    except OSError:
        return
    prefix = f".{target.name}."
    for name in names:
        if not (name.startswith(prefix) and name.endswith(TMP_SUFFIX)):
            continue
        leftover = target.parent / name
        try:
            st = os.lstat(leftover)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() \
                    and now - st.st_mtime > STALE_TMP_SECONDS:
                leftover.unlink()
        except OSError:
            continue


def _sync_folder(folder: Path) -> None:
    """Flush the folder's entry for the replaced file (best effort: not every system can)."""
    with suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _test_kill() -> None:
    how = os.environ.get(KILL_ENV)
    if how in ("TERM", "KILL"):
        os.kill(os.getpid(), getattr(signal, f"SIG{how}"))
        time.sleep(5)  # the signal arrives


def apply(change: Change) -> None:
    """Write ``change`` through its symlink via an exclusive temporary file (if it changes)."""
    if not change.changed:
        return
    path, target = change.path, change.target
    try:
        data = change.after.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(f"cannot write settings file {path}: a path brainlab would write is"
                          " not UTF-8") from None
    mode, group = None, -1
    if change.before is None and os.path.lexists(target):
        raise ConfigError(f"settings file {path} appeared while brainlab edited it; left as it"
                          " is now: run the command again")
    if change.before is not None:
        try:
            st = os.stat(target)
        except OSError as exc:
            raise ConfigError(f"settings file {path} went away while brainlab edited it"
                              f" ({exc.strerror}); run the command again") from None
        if st.st_uid != os.geteuid():
            raise ConfigError(f"settings file {path} belongs to another user (uid {st.st_uid});"
                              " left untouched: run the command as that user")
        if st.st_nlink > 1:
            raise ConfigError(f"settings file {path} has {st.st_nlink} hard links; left"
                              " untouched: replacing it would split them (make it a single"
                              " file or a symlink)")
        if not st.st_mode & stat.S_IWUSR:
            raise ConfigError(f"settings file {path} is read-only (mode"
                              f" {stat.S_IMODE(st.st_mode):04o}); left untouched: make it"
                              " writable (chmod u+w) for brainlab to edit it")
        read_st = change.read_stat
        if read_st is not None and (st.st_ino, st.st_size, st.st_mtime_ns) != (
                read_st.st_ino, read_st.st_size, read_st.st_mtime_ns):
            raise ConfigError(f"settings file {path} changed while brainlab edited it; left as"
                              " it is now: run the command again")
        mode, group = stat.S_IMODE(st.st_mode), st.st_gid
    else:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot write settings file {path}: {exc.strerror}") from None
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    _sweep(target)
    tmp = None
    try:
        with _signals_raise():
            try:
                fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TMP_SUFFIX,
                                           dir=target.parent)
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                    out.flush()
                    os.fchmod(out.fileno(), mode)
                    with suppress(OSError):  # the file's group, where we may give it
                        os.fchown(out.fileno(), -1, group)
                    os.fsync(out.fileno())
                _test_kill()
                os.replace(tmp, target)
                tmp = None
                _sync_folder(target.parent)
            finally:
                if tmp is not None:
                    Path(tmp).unlink(missing_ok=True)
    except _Interrupted as exc:
        raise ConfigError(f"settings file {path}: interrupted ({exc}) before brainlab replaced"
                          " it; it is as it was: run the command again") from None
    except OSError as exc:
        raise ConfigError(f"cannot write settings file {path}: {exc.strerror or exc}") from None
