"""``brainlab hooks install|uninstall``: brainlab's entries in Claude Code's settings file.

Claude Code reads ``hooks`` (event -> list of ``{matcher?, hooks: [{type: command, command,
timeout}]}``) and ``statusLine`` (``{type: command, command, padding}``) from settings files
of three scopes: user (``~/.claude/settings.json``, or ``$CLAUDE_CONFIG_DIR/settings.json``),
project (``.claude/settings.json``) and local (``.claude/settings.local.json``). Installing
adds one handler per event (the ingest on Stop, SubagentStop, SessionEnd and PreCompact, the
boot context on SessionStart) and the status line, keeping every other key and hook;
brainlab's handlers are recognised by their command (``brainlab hook ...``, ``brainlab
statusline``), so installing again replaces them (idempotent) and uninstalling removes them
and nothing else. A status line the user set to another command is kept. A file that is
not a JSON object is never written: :class:`~brainlab.common.errors.ConfigError`.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from brainlab.common.errors import ConfigError

INGEST_EVENTS = ("Stop", "SubagentStop", "SessionEnd", "PreCompact")
START_EVENT = "SessionStart"
HOOK_TIMEOUT = 10  # seconds; the hook returns in well under one (the ingest is detached)
OURS = re.compile(r"(^|[/\\\s'\"])brainlab(\.exe|[/\\]live[/\\]launch\.py)?['\"]?\s+"
                  r"(hook\s+(ingest|session-start)|statusline)\b")


@dataclass
class Change:
    """What an install or uninstall does to one settings file."""

    path: Path
    before: str | None  # None: the file does not exist
    after: str
    note: str | None = None  # e.g. a status line of the user's, kept

    @property
    def changed(self) -> bool:
        """Whether the file's text changes."""
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff of the change (empty when nothing changes)."""
        return "".join(difflib.unified_diff(
            (self.before or "").splitlines(keepends=True), self.after.splitlines(keepends=True),
            fromfile=str(self.path), tofile=str(self.path)))


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


def load(path: Path) -> tuple[str | None, dict]:
    """The file's text and its object; ConfigError when it is not a JSON object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc}") from None
    if not text.strip():
        return text, {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"settings file {path} is not valid JSON ({exc}); left untouched:"
                          " fix it, or pass another file with --settings") from None
    if not isinstance(value, dict):
        raise ConfigError(f"settings file {path} holds a JSON {type(value).__name__}, not an"
                          " object; left untouched: fix it, or pass --settings") from None
    hooks = value.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise ConfigError(f"settings file {path}: \"hooks\" is not an object; left untouched:"
                          " fix it, or pass --settings")
    for event, groups in (hooks or {}).items():
        if not isinstance(groups, list):
            raise ConfigError(f"settings file {path}: hooks.{event} is not a list; left"
                              " untouched: fix it, or pass --settings")
    return text, value


def _is_ours(handler) -> bool:
    return isinstance(handler, dict) and isinstance(handler.get("command"), str) \
        and OURS.search(handler["command"]) is not None


def remove_ours(settings: dict) -> None:
    """Drop brainlab's handlers (and the groups and events only they filled) and status line."""
    hooks = settings.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            groups = hooks[event]
            if not isinstance(groups, list):
                continue
            kept = []
            for group in groups:
                inner = group.get("hooks") if isinstance(group, dict) else None
                if isinstance(inner, list) and any(_is_ours(h) for h in inner):
                    inner = [h for h in inner if not _is_ours(h)]
                    if not inner:
                        continue
                    group = {**group, "hooks": inner}
                kept.append(group)
            if kept:
                hooks[event] = kept
            elif groups:  # emptied by this removal
                del hooks[event]
        if not hooks:
            del settings["hooks"]
    if _is_ours(settings.get("statusLine")):
        del settings["statusLine"]


def add_ours(settings: dict, cmds: dict[str, str]) -> str | None:
    """Add brainlab's handlers and status line; a note when the user's status line is kept."""
    hooks = settings.setdefault("hooks", {})
    def handler(command: str) -> dict:
        return {"type": "command", "command": command, "timeout": HOOK_TIMEOUT}

    for event in INGEST_EVENTS:
        hooks.setdefault(event, []).append({"hooks": [handler(cmds["ingest"])]})
    hooks.setdefault(START_EVENT, []).append({"hooks": [handler(cmds["session-start"])]})
    if "statusLine" in settings:
        return ("statusLine kept: the settings already run another status line"
                f" ({settings['statusLine']!r}); set it to `{cmds['statusline']}` to use"
                " brainlab's")
    settings["statusLine"] = {"type": "command", "command": cmds["statusline"], "padding": 0}
    return None


def dump(settings: dict) -> str:
    """The settings' text as brainlab writes it (2-space JSON, keys in their order)."""
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def plan(path: Path, install: bool, db: Path, program: str | None = None) -> Change:
    """The change an install (or uninstall) makes to ``path``, without writing it."""
    before, settings = load(path)
    remove_ours(settings)
    note = add_ours(settings, commands(db, program)) if install else None
    after = dump(settings)
    if before is not None and not install and after == dump(load(path)[1]):
        after = before  # nothing of brainlab's in it: leave the text as the user wrote it
    if install and before is not None and dump(load(path)[1]) == after:
        after = before
    return Change(path, before, after, note)


def apply(change: Change) -> None:
    """Write ``change`` atomically, keeping the file's mode; nothing when nothing changes."""
    if not change.changed:
        return
    path = change.path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(change.after, encoding="utf-8")
        if change.before is not None:
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"cannot write settings file {path}: {exc}") from None
