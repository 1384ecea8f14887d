"""Write recommended values into a settings file: ``brainlab tune ... --write [FILE]``.

The file is parsed and written back with tomlkit, a TOML library that round-trips: every
other key, comment, blank line and the order of tables stay as they were; only the
recommended keys of ``[thresholds]`` or ``[regulator]`` change (the table is added at the end
when missing). The new text replaces the old one atomically: it is written to a temporary
file in the same folder, flushed and fsynced, then renamed over the old one
(``os.replace``), and the folder is fsynced, so a process killed at any moment leaves the old
file or the new one, never a mix (a killed run may leave its ``.NAME.*.tmp`` file behind).
"""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
import tempfile
from pathlib import Path

from brainlab.common.errors import ConfigError

TABLES = ("thresholds", "regulator")


def updated_text(text: str, table: str, values: dict, source: str = "settings") -> str:
    """``text`` (a TOML document) with ``values`` set in ``[table]``; everything else kept."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    if table not in TABLES:
        raise ConfigError(f"tuning writes [thresholds] or [regulator], not [{table}]")
    try:
        document = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigError(f"{source}: not a readable TOML file ({exc}); fix it or give "
                          "--write ANOTHER_FILE") from exc
    if table not in document:
        if text and not text.endswith("\n\n"):
            document.add(tomlkit.nl())
        document.add(table, tomlkit.table())
    section = document[table]
    if not isinstance(section, dict):
        raise ConfigError(f"{source}: {table} is not a table ([{table}])")
    for key, value in values.items():
        section[key] = value
    return tomlkit.dumps(document)


def diff(old: str, new: str, path: Path) -> str:
    """A unified diff of the file's old and new text ('' when they are the same)."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True),
                                        new.splitlines(keepends=True),
                                        fromfile=f"{path} (now)", tofile=f"{path} (written)"))


def atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` all at once (temp file, fsync, os.replace, folder fsync)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself reaches the disk
        folder_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(folder_fd)
        finally:
            os.close(folder_fd)


def plan_write(path: Path, table: str, values: dict) -> tuple[str, str]:
    """(old text, new text) of ``path`` with ``values`` in ``[table]`` ('' when absent)."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"--write {path}: a folder; give the settings file (brainlab.toml)")
    try:
        old = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read ({exc})") from exc
    return old, updated_text(old, table, values, str(path))


def write_values(path: Path, table: str, values: dict, dry_run: bool = False) -> str:
    """Set ``values`` in ``[table]`` of ``path``; return the diff (written unless dry_run)."""
    old, new = plan_write(path, table, values)
    if not dry_run and new != old:
        try:
            atomic_write(Path(path), new)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot be written ({exc.strerror or exc})") from exc
    return diff(old, new, Path(path))


def settings_file(given: str | os.PathLike | None) -> Path:
    """The file ``--write`` changes: ``given``, else the settings' file, else ./brainlab.toml.

    The settings' file is the one the process's settings were read from
    (:func:`brainlab.settings.current`: --config, $BRAINLAB_CONFIG, ./brainlab.toml); a
    missing brainlab.toml is created in the folder the command was typed in.
    """
    if given:
        return Path(given)
    from brainlab.common.paths import DEFAULT_CONFIG, user_path
    from brainlab.settings import current

    return current().source or user_path(DEFAULT_CONFIG)
