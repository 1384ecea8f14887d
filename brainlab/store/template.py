"""A cached empty store, so a new store is a file copy instead of a second of view binding.

Creating a store binds about a hundred views and writes hundreds of column comments (1.2-1.5
CPU-s, in memory as on disk: DuckDB binds each view's query when it is created). The result
depends only on the catalogue (schema, views, models, protocol lookups), brainlab's version and
DuckDB's, so it is built once per such key into the user's cache folder and copied from there.
The key names the catalogue's files by their stat (``schema.template_key``), not their hash:
finding the template costs a process ~360 stats, and another install or an edit of a model
file gets a template of its own.

The cache folder is ``$BRAINLAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/brainlab``, else
``~/.cache/brainlab``. A template is written under a temporary name and renamed into place
(two processes may build it at once; the last rename wins, both files are whole). A new store
is copied beside its target and linked into place, so a killed copy never leaves half a store.
Building a template removes all but the few newest others. When the cache cannot be written,
callers build the store in place, as before.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from brainlab.common.paths import CACHE_ENV, cache_dir  # noqa: F401 - CACHE_ENV: tests, benchmarks


def template_path(key: str) -> Path:
    """The cached empty store for catalogue ``key``."""
    return cache_dir() / f"empty-store-{key}.duckdb"


def cached(key: str) -> bool:
    """True when the template of ``key`` is there to copy (False too if it cannot be seen)."""
    try:
        return template_path(key).is_file()
    except (OSError, RuntimeError):  # a folder this user may not search; no home folder
        return False


def ensure(key: str, build: Callable[[Path], None]) -> Path | None:
    """The template for ``key``, built with ``build(path)`` when missing; None if unwritable."""
    try:
        target = template_path(key)
        if target.is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        folder = tempfile.mkdtemp(prefix=".building-", dir=target.parent)
    except (OSError, RuntimeError):  # unusable cache folder; no home folder
        return None
    try:
        built = Path(folder) / target.name
        build(built)
        os.replace(built, target)
    except Exception:  # noqa: BLE001 - any failure: the caller builds in place (and says why)
        return None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    _prune(target.parent)
    return target


KEEP = 4  # templates kept (several venvs or versions may share a cache); older ones go


def _prune(folder: Path) -> None:
    """Remove all but the KEEP newest templates (each catalogue change makes a new one)."""
    found = []
    for path in folder.glob("empty-store-*.duckdb"):
        with contextlib.suppress(OSError):
            found.append((path.stat().st_mtime, path))
    for _mtime, path in sorted(found, reverse=True)[KEEP:]:
        with contextlib.suppress(OSError):
            path.unlink()


def copy_to(template: Path, path: Path) -> bool:
    """Copy ``template`` to the new file ``path``; False when ``path`` appeared meanwhile."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(handle)
    try:
        shutil.copyfile(template, partial)
        try:
            os.link(partial, path)  # fails if the file exists: never replaces a store
        except FileExistsError:
            return False
        except OSError:  # no hard links on this file system
            if path.exists():
                return False
            os.replace(partial, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
    return True


def discard(key: str) -> None:
    """Remove the template of ``key`` (found corrupt or stale), so the next use rebuilds it."""
    with contextlib.suppress(OSError):
        template_path(key).unlink()
