"""The lake's layout: which tables, how they are partitioned, and where their files live.

``<lake>/<table>/user=<user>/machine=<machine>/*.parquet`` for every raw table of the store
(``ingest_errors`` and ``ingest_files`` one level further, ``source=<source>``), the team-wide
price table ``<lake>/cc_prices/*.parquet``, and the Spark roll-ups ``<lake>/rollup_*/``.
Columns are the store's own (docs/schema.md); ``user`` and ``machine`` live in the path.
"""

from __future__ import annotations

import getpass
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from brainlab.common.errors import LakeError, SourceError
from brainlab.store.schema import LOOKUP_TABLES, empty_store
from brainlab.transcripts import discovery as claude_files

PARTITIONS = ("user", "machine")  # every raw table's hive partitions, in path order
EXTRA_PARTITIONS = {"ingest_errors": ("source",), "ingest_files": ("source",)}
GLOBAL_TABLES = ("cc_prices",)  # team-wide, not partitioned
NOT_EXPORTED = ("brainlab_meta",
                *LOOKUP_TABLES,  # lookup tables of brainlab.spec: rebuilt by attach
                "cc_usage_rollup")  # derived per store: an attached lake reads the usage views
ROLLUPS = ("rollup_usage_daily", "rollup_usage_weekly", "rollup_usage_users",
           "rollup_usage_models")
_NAME = re.compile(r"^[A-Za-z0-9._@+-]+$")
# the partition (user and machine) of the error rows of folders whose names cannot be one
REFUSED = "_refused"


def partitions(table: str) -> tuple[str, ...]:
    """The hive partition columns of ``table`` in the lake (none for team-wide tables)."""
    if table in GLOBAL_TABLES:
        return ()
    return PARTITIONS + EXTRA_PARTITIONS.get(table, ())


# the characters Spark escapes in a hive partition folder's value (%XX, upper-case hex), as its
# ExternalCatalogUtils.escapePathName does on Linux; a null value is the default partition
_ESCAPED = frozenset([*map(chr, range(1, 0x20)), '"', "#", "%", "'", "*", "/", ":", "=", "?",
                      "\\", "\x7f", "{", "[", "]", "^"])
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


def escape_path_name(value: str) -> str:
    """A partition value as Spark names its folder (``a:b`` -> ``a%3Ab``)."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def partition_path(names: tuple[str, ...], values: tuple) -> str:
    """The hive folders of one partition, as Spark writes them: ``user=ada/machine=box``."""
    return "/".join(f"{escape_path_name(n)}="
                    f"{DEFAULT_PARTITION if v is None or v == '' else escape_path_name(str(v))}"
                    for n, v in zip(names, values, strict=True))


def is_remote(uri: str) -> bool:
    """True for an object-store URI (``s3://``, ``s3a://``, ``gs://`` ...), False for a path."""
    return bool(re.match(r"^[a-z][a-z0-9+.-]*://", str(uri))) and not str(uri).startswith("file:")


def normalize(uri: str | Path) -> str:
    """A lake location as text: object-store URIs as given, local paths absolute."""
    text = str(uri)
    if is_remote(text):
        return text.rstrip("/")
    if text.startswith("file://"):
        text = text[len("file://"):]
    return str(Path(text).expanduser().resolve())


# what DuckDB's and Spark's readers take as a pattern in a path (issue 47 item 7): a lake path
# holding one exported, then attached as 0 tables; refused instead, before anything is written
GLOB_CHARACTERS = "*?[]{}"


def check_lake(uri: str) -> str:
    """``uri`` (normalized) when usable as a lake; :class:`LakeError` when it holds a glob."""
    found = [c for c in GLOB_CHARACTERS if c in uri]
    if found:
        from brainlab.common.plaintext import visible

        raise LakeError(f"lake path {visible(uri)[:300]} holds {' '.join(found)}: DuckDB and"
                        " Spark read these as file patterns, so the lake could not be read"
                        " back; choose a folder whose path has none of * ? [ ] { }")
    return uri


def misplaced(table: str, table_root: str, file: str) -> str | None:
    """Why ``file`` (found under ``table_root``) is not where ``table``'s files go, or None.

    A file's folders below its table must be exactly the table's partitions, in order
    (``user=<u>/machine=<m>/<file>.parquet``; team-wide tables: no folder): a file at another
    depth would make DuckDB's hive reader stop the whole attach (issue 47 item 7).
    """
    relative = file[len(table_root):].lstrip("/") if file.startswith(table_root) else file
    folders = relative.split("/")[:-1]
    names = partitions(table)
    if len(folders) == len(names) and all(f.startswith(f"{n}=") for f, n in
                                          zip(folders, names, strict=True)):
        return None
    want = "/".join(f"{n}=<{n}>" for n in names)
    return (f"at the wrong folder depth (a file of {table} goes in"
            f" {table}/{want + '/' if want else ''}<name>.parquet)")


def table_uri(lake: str, table: str) -> str:
    """Where ``table`` lives in ``lake``."""
    return f"{normalize(lake)}/{table}"


def check_name(kind: str, value: str) -> str:
    """A user or machine name usable as a partition value (no slash, no '=').

    Its folder ``<kind>=<value>`` must fit the 255 bytes a file name may have.
    """
    if not value or not _NAME.match(value) or value in (".", "..") \
            or value.upper() == "__HIVE_DEFAULT_PARTITION__" or value == REFUSED:
        raise SourceError(f"{kind} name {value[:60]!r} cannot be a lake partition: use"
                          " letters, digits and . _ @ + - only")
    if len(f"{kind}={value}".encode()) > 255:
        raise SourceError(f"{kind} name of {len(value)} characters cannot be a lake partition:"
                          f" {255 - len(kind) - 1} at most")
    return value


def default_user() -> str:
    """The login name: the ``user`` of a single-user export or ingest."""
    return re.sub(r"[^A-Za-z0-9._@+-]", "_", getpass.getuser() or "user")


def default_machine() -> str:
    """The host name: the ``machine`` of a single-user export or ingest."""
    return re.sub(r"[^A-Za-z0-9._@+-]", "_", socket.gethostname().split(".")[0] or "machine")


def store_columns() -> dict[str, list[tuple[str, str]]]:
    """Every raw table of the store with its (column, DuckDB type) list, from the schema files."""
    with empty_store() as con:  # the cached empty store: no catalogue to build
        cols: dict[str, list[tuple[str, str]]] = {}
        for table, column, data_type in con.execute(
                "SELECT c.table_name, c.column_name, c.data_type FROM duckdb_columns() c"
                " JOIN duckdb_tables() t USING (database_name, schema_name, table_name)"
                " WHERE c.schema_name = 'main' ORDER BY c.table_name, c.column_index").fetchall():
            if table not in NOT_EXPORTED:
                cols.setdefault(table, []).append((column, data_type))
        return cols


class Refused(NamedTuple):
    """A folder or file of a team tree left out, why, and the partition its error row goes to.

    A folder whose name cannot be a partition goes to ``user=_refused/machine=_refused``; a
    file discovery refuses (a FIFO, a link outside the tree) to its own user and machine.
    """

    path: str
    reason: str
    user: str = REFUSED
    machine: str = REFUSED


@dataclass(frozen=True)
class TeamFile:
    """One transcript of a team tree, with the user and machine its place names."""

    path: str
    user: str
    machine: str
    size: int


def discover_team(root: str | Path, user: str | None = None, machine: str | None = None,
                  refused: list[Refused] | None = None) -> list[TeamFile]:
    """List ``<root>/<user>/<machine>/projects/**.jsonl``, or a plain ``projects/`` tree.

    A root holding ``projects/`` (or ``*.jsonl`` directly) is one user's, named by ``user``
    and ``machine`` (default: login and host). File discovery is the local ingest's own
    (:func:`brainlab.transcripts.discovery.discover`), so both paths read the same files; the
    paths it refuses (FIFOs, links outside the tree, ...) go to ``refused`` with their user
    and machine. In a team tree, a user or machine folder whose name cannot be a partition
    (``bob smith``, 251 characters) goes to ``refused`` too and the other folders are listed
    (issue 29); without ``refused`` it raises :class:`SourceError`.
    """
    root = Path(root).expanduser()
    if not root.is_dir():
        raise SourceError(f"no transcripts at {root}")
    root = root.resolve()
    single = not any(root.glob("*/*/projects"))  # a team tree is <user>/<machine>/projects
    trees: list[tuple[Path, str, str]] = []
    if single:
        trees.append((root, check_name("user", user or default_user()),
                      check_name("machine", machine or default_machine())))
    else:
        for user_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            for machine_dir in sorted(p for p in user_dir.iterdir() if p.is_dir()):
                try:
                    trees.append((machine_dir, check_name("user", user or user_dir.name),
                                  check_name("machine", machine or machine_dir.name)))
                except SourceError as exc:
                    if refused is None:
                        raise
                    refused.append(Refused(str(machine_dir), f"skipped: {exc}"))
    files = []
    for tree, tree_user, tree_machine in trees:
        found, problems = claude_files.discover(tree)
        if refused is not None:
            refused.extend(Refused(path, reason, tree_user, tree_machine)
                           for path, reason in problems)
        for path in found:
            resolved = path.resolve()
            files.append(TeamFile(str(resolved), tree_user, tree_machine,
                                  resolved.stat().st_size))
    return files
