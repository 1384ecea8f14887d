"""``brainlab check PATH``: load a brain checkout into a throw-away store and read its violations.

The checkout is ingested through the ordinary brain sources into a throw-away DuckDB database
(a temporary copy of the empty-store template, removed at the end: no prior ingest, nothing
kept); the rules are the store's SQL views
(``violations``, store/models/rules/). Ids given to ``select``/``ignore`` match a rule id
exactly or as a prefix (``BRK`` = every broker rule), as code linters do.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from brainlab.common.errors import ConfigError, SourceError
from brainlab.rules.catalogue import BY_ID, RULES, Rule
from brainlab.sources.messages import bounded, bounded_data
from brainlab.store import open_writer
from brainlab.store.connection import engine, raw_table_names, sql_ident
from brainlab.store.ingest import ingest_brain


@dataclass(frozen=True)
class Violation:
    """One broken rule, located in a file of the checkout."""

    rule: str
    severity: str
    subject_kind: str
    subject: str
    file: str  # relative to the checked path when inside it
    line: int | None
    message: str
    spec: str
    at: str | None
    evidence: dict


@dataclass
class CheckResult:
    """What a check found, and what it could not read."""

    root: Path
    violations: list[Violation] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)  # the rules that were evaluated
    not_evaluated: list[Rule] = field(default_factory=list)  # need transcripts: no --db given
    files_read: int = 0
    parse_problems: list[tuple[str, int | None, str]] = field(default_factory=list)

    @property
    def errors(self) -> int:
        """Violations of error severity (any makes `brainlab check` exit 1)."""
        return sum(v.severity == "error" for v in self.violations)

    @property
    def exit_code(self) -> int:
        """1 when a rule of error severity is broken or a file could not be read, else 0.

        An unreadable file was not checked at all: as a linter treats a syntax error, the
        check fails until the file is fixed (or left out of the checkout).
        """
        return 1 if self.errors or self.parse_problems else 0

    def as_dicts(self) -> list[dict]:
        """The violations, then the files that could not be read, as plain dicts (JSON).

        An unreadable file has the violations' keys with ``rule`` null, ``severity`` error
        and ``subject_kind`` ``unreadable-file`` (as ruff lists a syntax error with a null code).
        """
        return [asdict(v) for v in self.violations] + [
            {"rule": None, "severity": "error", "subject_kind": "unreadable-file",
             "subject": file, "file": file, "line": line,
             "message": f"could not be read, skipped: {reason}", "spec": None, "at": None,
             "evidence": {}}
            for file, line, reason in self.parse_problems]


def selected_rules(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> list[Rule]:
    """The catalogue rules kept by ``select`` (default all) minus ``ignore``; ids or prefixes."""
    def matches(rule: Rule, codes: list[str]) -> bool:
        return any(rule.id.startswith(code) for code in codes)

    select = [s.strip().upper() for s in select if s.strip()]
    ignore = [s.strip().upper() for s in ignore if s.strip()]
    unknown = [c for c in select + ignore if not any(r.id.startswith(c) for r in RULES)]
    if unknown:
        raise ConfigError(f"unknown rule id(s) {', '.join(unknown)}; known: "
                          f"{', '.join(BY_ID)}")
    return [r for r in RULES
            if (not select or matches(r, select)) and not matches(r, ignore)]


def check(path: str | Path, select: Iterable[str] = (), ignore: Iterable[str] = (),
          db: str | Path | None = None) -> CheckResult:
    """Check the brain checkout at ``path`` against the selected rules.

    ``db``: a brainlab database whose Claude Code transcripts (``cc_*`` tables, read-only)
    are copied in, for the rules that read transcripts (``Rule.needs_transcripts``); without
    it those rules are not evaluated and listed in ``CheckResult.not_evaluated``.
    """
    root = Path(path).resolve()
    if not root.is_dir():
        raise SourceError(f"{root} is not a folder: give the path of a brain checkout")
    rules = selected_rules(select, ignore)
    skipped = [r for r in rules if r.needs_transcripts and db is None]
    rules = [r for r in rules if r not in skipped]
    # a throw-away store: a temporary copy of the cached empty store (0.04 s) rather than an
    # in-memory one, whose catalogue would be built anew (views bound: about 1 s)
    try:
        scratch = tempfile.TemporaryDirectory(prefix="brainlab-check-")
        con = open_writer(Path(scratch.name) / "check.duckdb", engine_only=True)
    except OSError:  # no writable temporary folder: in memory, as before
        scratch = None
        con = open_writer(":memory:", describe=False, engine_only=True)
    try:
        summary = ingest_brain(con, root)
        if db is not None:
            copy_transcripts(con, Path(db))
        rows = con.execute(
            "SELECT rule, severity, subject_kind, subject, file, line, message, spec, "
            "CAST(occurred_at AS VARCHAR), evidence FROM violations WHERE list_contains(?, rule) "
            "ORDER BY file, line NULLS FIRST, rule, subject", [[r.id for r in rules]]
        ).fetchall()
        problems = con.execute("SELECT file, line, reason FROM ingest_errors "
                               "WHERE severity = 'error' ORDER BY file, line").fetchall()
    finally:
        con.close()
        if scratch is not None:
            scratch.cleanup()
    # a finding quotes the brain's files: each long run of it is cut with its byte count, so a
    # 2 MB line is a short message in text, JSON and SARIF alike (issue 47)
    result = CheckResult(root=root, rules=rules, not_evaluated=skipped,
                         files_read=sum(summary.loaded.values()),
                         parse_problems=[(_relative(f, root), line, bounded(reason))
                                         for f, line, reason in problems])
    for rule, severity, kind, subject, file, line, message, spec, at, evidence in rows:
        result.violations.append(Violation(
            rule=rule, severity=severity, subject_kind=kind, subject=bounded(subject),
            file=_relative(file, root), line=None if line is None else int(line),
            message=bounded(message), spec=spec, at=at,
            evidence=bounded_data(json.loads(evidence or "{}"))))
    return result


def copy_transcripts(con, db: Path) -> None:
    """Copy the transcript tables (``cc_*``) of the database ``db`` into ``con``'s store."""
    if not Path(db).is_file():
        raise SourceError(f"no database at {db}: give --db the file `brainlab ingest claude` "
                          "wrote, or leave it out")
    home = con.execute("SELECT current_database()").fetchone()[0]
    con.execute("ATTACH ? AS transcripts (READ_ONLY)", [str(db)])
    try:
        # a .duckdb file is code (issue 29, Injection 3): a raw table that is a view could
        # read local files inside this writer connection, so such a store is refused (the
        # store's own cc_* views are views by design: only tables are copied below)
        views = [name for (name,) in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE database_name = 'transcripts'"
            " AND schema_name = 'main' AND NOT internal AND list_contains(?, view_name)"
            " ORDER BY 1", [sorted(raw_table_names())]).fetchall()]
        if views:
            raise SourceError(
                f"database {db} is refused: its transcript table(s) {', '.join(views[:5])} are"
                " views, not tables (a store can hide code in a view). Give --db a store"
                " written by `brainlab ingest claude`")
        shared = con.execute("""
            SELECT m.table_name, list(m.column_name ORDER BY m.column_index)
            FROM duckdb_columns() m JOIN duckdb_columns() t
              ON t.table_name = m.table_name AND t.column_name = m.column_name
            WHERE m.database_name = $home AND t.database_name = 'transcripts'
              AND m.schema_name = 'main' AND t.schema_name = 'main'
              AND m.table_name LIKE 'cc\\_%' ESCAPE '\\'
              AND m.table_name IN (SELECT table_name FROM duckdb_tables()
                                   WHERE database_name = $home)
              AND t.table_name IN (SELECT table_name FROM duckdb_tables()
                                   WHERE database_name = 'transcripts')
            GROUP BY m.table_name""", {"home": home}).fetchall()
        for table, columns in shared:
            names = ", ".join(sql_ident(c) for c in columns)
            try:
                con.execute(f'INSERT INTO {sql_ident(home)}.main.{sql_ident(table)} ({names}) '
                            f'SELECT {names} FROM transcripts.main.{sql_ident(table)}')
            except engine().Error as exc:  # a table of another shape: the user's file, not a bug
                raise SourceError(
                    f"database {db}: its table {table} is not a brainlab transcript table"
                    f" ({str(exc).splitlines()[0]}). Give --db a store written by"
                    " `brainlab ingest claude`") from None
    finally:
        con.execute("DETACH transcripts")


def _relative(file: str | None, root: Path) -> str:
    if not file:
        return "."
    try:
        return Path(file).resolve().relative_to(root).as_posix()
    except ValueError:
        return file
