"""Issue 29 (Injection 1, Integrity 1 and 4): `brainlab export` is one atomic, locked
operation whose lake path never reaches SQL as code.

Through the real CLI in a subprocess: a lake path holding `'` exports; a crafted path that
used to run a second statement writes nothing else; two exports racing on one user and
machine leave every table from one store; a killed export's `_staging-*`, `*.old-*` and
journal are finished or removed by the next one; a full disk (a small tmpfs the test mounts
when it runs as root) ends in one `Error:` line and leaves the lake as it was.
"""

import json
import os
import shutil
import subprocess
import sys

import duckdb
import pytest
from claude_factory import assistant, tool_use, usage, user, write
from conftest import cli_env
from tmpfs import NEEDS_ROOT, small_tmpfs

from brainlab.lake.export import JOURNAL, recover


def _env(tmp_path):
    return cli_env(tmp_path)


def cli(tmp_path, *args, check=True):
    done = subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd=tmp_path,
                          env=_env(tmp_path), capture_output=True, text=True, timeout=300)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def ingested(folder, name, sessions, calls):
    """A store from a small transcript whose session ids and commands say ``name`` (ingested
    by the CLI in a subprocess)."""
    root = folder / f"cfg-{name}"
    for s in range(sessions):
        sid = f"{name}-s{s}"
        lines = []
        for i in range(calls):
            t = f"2026-06-0{s + 1}T10:{i:02d}:00.000Z"
            lines.append(user(sid, t, text=f"{name} task {i}"))
            lines.append(assistant(sid, t, f"{name}m{s}{i}", f"{name}r{s}{i}", usage(10, 5),
                                   content=[tool_use(f"{name}b{s}{i}", "Bash",
                                                     command=f"echo {name}")]))
        write(root / "projects" / f"-home-{name}" / f"{sid}.jsonl", lines)
    db = folder / f"{name}.duckdb"
    cli(folder, "ingest", "claude", str(root / "projects"), "--db", str(db))
    return db


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """``store(tmp_path, name, sessions=3, calls=4)``: a copy in ``tmp_path`` of the store
    :func:`ingested` makes, each (name, sessions, calls) ingested once a module: the tests
    export it, never write it, and ingested alice's and bob's again each time (a CLI run
    each, issue 40)."""
    built = {}

    def make(tmp_path, name, sessions=3, calls=4):
        key = (name, sessions, calls)
        if key not in built:
            built[key] = ingested(tmp_path_factory.mktemp(f"{name}-{sessions}x{calls}"),
                                  *key)
        copy = tmp_path / f"{name}.duckdb"
        shutil.copy(built[key], copy)
        return copy

    return make


def sessions_by_table(lake):
    """For each table of the lake: the set of session-id prefixes (store names) it holds."""
    con = duckdb.connect()
    found = {}
    for table in sorted(p.name for p in lake.iterdir() if p.is_dir()
                        and not p.name.startswith("_")):
        files = list((lake / table).rglob("*.parquet"))
        if not files:
            continue
        cols = [r[0] for r in con.execute("DESCRIBE SELECT * FROM read_parquet(?)",
                                          [str(files[0])]).fetchall()]
        if "session_id" not in cols:
            continue
        found[table] = {r[0].split("-")[0] for r in con.execute(
            "SELECT DISTINCT session_id FROM read_parquet(?, union_by_name = true)"
            " WHERE session_id IS NOT NULL", [[str(f) for f in files]]).fetchall()}
    return found


@pytest.mark.parametrize("folder", ["it's a lake", "x.parquet' (FORMAT csv); COPY (SELECT 42)"
                                    " TO 'pwned.csv' (FORMAT csv); --"])
def test_a_lake_path_is_a_literal_never_code(tmp_path, folder, store):
    db = store(tmp_path, "alice", sessions=1, calls=1)
    lake = tmp_path / folder
    done = cli(tmp_path, "export", "--db", str(db), "--lake", str(lake), "--user", "u",
               "--machine", "m")
    assert "exported" in done.stdout
    assert list(lake.glob("cc_request_lines/user=u/machine=m/*.parquet"))
    assert not list(tmp_path.rglob("pwned.csv"))


def test_racing_exports_never_mix_two_stores(tmp_path, store):
    a, b = store(tmp_path, "alice"), store(tmp_path, "bob")
    lake = tmp_path / "lake"
    for _ in range(3):
        procs = [subprocess.Popen([sys.executable, "-m", "brainlab.cli", "export", "--db",
                                   str(db), "--lake", str(lake), "--user", "u", "--machine",
                                   "m"], cwd=tmp_path, env=_env(tmp_path),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for db in (a, b)]
        for proc in procs:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
        held = sessions_by_table(lake)
        assert len(held) >= 3
        assert len(set().union(*held.values())) == 1, held  # one store in every table
    assert not list(lake.glob("_staging-*")) and not list(lake.rglob("*.old-*"))


def test_a_killed_export_is_finished_or_cleaned_by_the_next(tmp_path, store):
    a, b = store(tmp_path, "alice"), store(tmp_path, "bob")
    lake = tmp_path / "lake"
    cli(tmp_path, "export", "--db", str(a), "--lake", str(lake), "--user", "u", "--machine", "m")
    # A kill between writing the journal and swapping: half the partitions swapped.
    staged = tmp_path / "staged"
    cli(tmp_path, "export", "--db", str(b), "--lake", str(staged), "--user", "u",
        "--machine", "m")
    staging = lake / "_staging-killed"
    swaps = []
    for i, part in enumerate(sorted(staged.glob("*/user=u/machine=m"))):
        table = part.parent.parent.name
        new = staging / table / "user=u" / "machine=m"
        new.parent.mkdir(parents=True)
        part.rename(new)
        target = lake / table / "user=u" / "machine=m"
        old = target.with_name("machine=m.old-killed")
        if i % 2 and target.exists():  # this one was half done: target moved aside
            target.rename(old)
        swaps.append((str(new), str(target), str(old)))
    (lake / JOURNAL).write_text(json.dumps(swaps))
    (lake / "_staging-older").mkdir()  # and an older kill before its journal
    recover(lake)
    held = sessions_by_table(lake)
    assert set().union(*held.values()) == {"bob"}, held
    assert not list(lake.glob("_staging-*")) and not list(lake.rglob("*.old-*"))
    assert not (lake / JOURNAL).exists()


def test_bad_partition_names_are_refused(tmp_path, store):
    db = store(tmp_path, "alice", sessions=1, calls=1)
    for name in ("__HIVE_DEFAULT_PARTITION__", ".", "..", ""):
        done = cli(tmp_path, "export", "--db", str(db), "--lake", str(tmp_path / "lake"),
                   "--user", name, "--machine", "m", check=False)
        assert done.returncode != 0 and done.stderr.startswith("Error: "), done.stderr
        assert "Traceback" not in done.stderr


@NEEDS_ROOT
def test_a_full_disk_leaves_the_lake_as_it_was(tmp_path, store):
    a = store(tmp_path, "alice")
    b = store(tmp_path, "bob", sessions=30, calls=40)
    with small_tmpfs(tmp_path / "small", "160k") as mnt:
        lake = mnt / "lake"
        cli(tmp_path, "export", "--db", str(a), "--lake", str(lake), "--user", "u",
            "--machine", "m")
        before = sessions_by_table(lake)
        filler = mnt / "filler"
        free = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
        filler.write_bytes(b"x" * max(0, free - 24 * 1024))
        done = cli(tmp_path, "export", "--db", str(b), "--lake", str(lake), "--user", "u",
                   "--machine", "m", check=False)
        assert done.returncode != 0
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("Error: "), done.stderr
        assert sessions_by_table(lake) == before
        assert not list(lake.glob("_staging-*"))


def test_paths_reach_sql_as_literals():
    from brainlab.store.connection import sql_ident, sql_literal

    con = duckdb.connect()
    for text in ("it's", "a'); DROP TABLE x; --", "\\'", '"q"'):
        assert con.execute(f"SELECT {sql_literal(text)}").fetchone()[0] == text
        assert con.execute(f"SELECT 1 AS {sql_ident(text)}").description[0][0] == text



def test_bad_lake_files_become_error_rows_and_the_rest_loads(tmp_path, store):
    """Issue 29 integrity 2: wrong-schema, corrupt, truncated, empty and non-Parquet files."""
    db = store(tmp_path, "alice")
    lake = tmp_path / "lake"
    cli(tmp_path, "export", "--db", str(db), "--lake", str(lake), "--user", "alice",
        "--machine", "m")
    good = next((lake / "cc_request_lines").rglob("*.parquet"))
    bob = lake / "cc_request_lines" / "user=bob" / "machine=m"
    bob.mkdir(parents=True)
    data = good.read_bytes()
    (bob / "truncated.parquet").write_bytes(data[: len(data) // 2])
    (bob / "corrupt.parquet").write_bytes(data[:8] + b"\x00" * (len(data) - 16) + data[-8:])
    (bob / "empty.parquet").write_bytes(b"")
    (bob / "text.parquet").write_text("not parquet\n")
    duckdb.connect().execute(f"COPY (SELECT 'x' AS input_tokens, 'y' AS ts) TO"
                             f" '{bob / 'wrong.parquet'}' (FORMAT parquet)")
    team = tmp_path / "team.duckdb"
    done = cli(tmp_path, "attach", "--lake", str(lake), "--db", str(team))
    assert "5 bad lake file(s) skipped" in done.stdout, done.stdout
    usage = cli(tmp_path, "usage", "daily", "--json", "--db", str(team))
    assert sum(r["requests"] for r in json.loads(usage.stdout)) == 12  # alice's rows load
    errors = cli(tmp_path, "errors", "--db", str(team)).stdout
    for name in ("truncated", "corrupt", "empty", "text", "wrong"):
        assert f"{name}.parquet: error: lake file of cc_request_lines skipped" in errors, errors
    assert "is VARCHAR, the store's is" in errors


def test_lake_housekeeping_and_hostile_lake_files(tmp_path):
    """Issue 47 item 7 (and item 4's lake part); the library in-process, the CLI for the
    three refusals a user reads (one line each, batched: subprocesses are the cost here).

    A partition folder replaced by a file leaves no ``.old-*``; a lake path with glob
    characters is refused at export and attach with one line; a file at the wrong folder
    depth (three ways) and a truncated one are skipped with an error row naming each; an
    attached store edited to read a local file is one named refusal; a Spark run on a lake
    whose lock another writer holds is refused before it writes (and before any JVM)."""
    import fcntl

    from brainlab.common.errors import LakeError
    from brainlab.lake import attach_lake, export_store
    from brainlab.lake.lock import LOCK
    from brainlab.store import open_writer, query
    from brainlab.transcripts.ingest import ingest_claude

    root = tmp_path / "cfg-alice"
    lines = []
    for i in range(3):
        t = f"2026-06-01T10:{i:02d}:00.000Z"
        lines += [user("s1", t, text="task"), assistant("s1", t, f"m{i}", f"r{i}", usage(10, 5))]
    write(root / "projects" / "-home-alice" / "s1.jsonl", lines)
    db = tmp_path / "alice.duckdb"
    con = open_writer(db)
    try:
        ingest_claude(con, root / "projects", workers=1)
    finally:
        con.close()
    lake = tmp_path / "lake"
    export_store(db, lake, "alice", "m")
    part = lake / "cc_spans" / "user=alice" / "machine=m"
    for child in part.iterdir():
        child.unlink()
    part.rmdir()
    part.write_text("a file where a partition folder was\n")
    export_store(db, lake, "alice", "m")
    assert part.is_dir() and list(part.glob("*.parquet"))
    assert not [p for p in lake.rglob("*") if ".old-" in p.name or "_staging" in p.name]

    for bad in ("lake[1]", "la*ke", "lake{a,b}", "lake?"):
        with pytest.raises(LakeError, match="^lake path .* holds"):
            export_store(db, tmp_path / bad, "alice", "m")
        assert not (tmp_path / bad).exists()
    with pytest.raises(LakeError, match="^lake path .* holds"):
        attach_lake(tmp_path / "lake[1]", tmp_path / "x.duckdb")
    done = cli(tmp_path, "export", "--db", str(db), "--lake", str(tmp_path / "l*"), check=False)
    (line,) = done.stderr.strip().splitlines()
    assert done.returncode == 1 and line.startswith("Error: lake path"), done.stderr

    table = lake / "cc_request_lines"
    good = next(table.rglob("*.parquet"))
    data = good.read_bytes()
    (table / "top.parquet").write_bytes(data)  # no partition folder
    (table / "user=alice" / "stray.parquet").write_bytes(data)  # one level short
    (good.parent / "deeper").mkdir()
    (good.parent / "deeper" / "x.parquet").write_bytes(data)  # one level too deep
    (good.parent / "notes.txt").write_text("not a table file\n")  # not *.parquet: not read
    (good.parent / "cut.parquet").write_bytes(data[: len(data) // 2])
    team = tmp_path / "team.duckdb"
    summary = attach_lake(lake, team)
    assert len(summary.bad_files) == 4, summary.bad_files
    errors = dict(query(team, "SELECT file, reason FROM ingest_errors").itertuples(index=False))
    for name in ("top.parquet", "user=alice/stray.parquet", "deeper/x.parquet"):
        (reason,) = [r for f, r in errors.items() if f.endswith(name)]
        assert reason.startswith("lake file of cc_request_lines skipped: at the wrong folder")
    assert any(f.endswith("cut.parquet") for f in errors)
    assert query(team, "SELECT sum(requests) AS n FROM usage_daily")["n"][0] == 3  # the good

    con = duckdb.connect(str(team))
    con.execute("CREATE OR REPLACE VIEW cc_request_lines AS SELECT * FROM read_csv('/etc/hostname')")
    con.close()
    done = cli(tmp_path, "usage", "daily", "--db", str(team), check=False)
    (line,) = done.stderr.strip().splitlines()
    assert done.returncode == 1 and line.startswith(f"Error: database {team} is refused"), line

    before = sorted(str(p) for p in lake.rglob("*"))
    with open(lake / LOCK, "a+") as held:  # another writer holds the lake
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        done = cli(tmp_path, "spark", "ingest-claude", str(root), "--lake", str(lake),
                   check=False)
    (line,) = done.stderr.strip().splitlines()
    assert done.returncode == 1 and "another export or Spark run is writing" in line, line
    assert sorted(str(p) for p in lake.rglob("*")) == before  # nothing written


def test_a_lake_written_before_the_newest_usage_columns_still_attaches(tmp_path):
    """Issue 45 leftover: a lake exported before cc_request_lines had plugin, skill and
    price_version (files without them) attaches; those columns read as NULL (as an upgraded
    store's new column) and every figure stays; a newer file beside it keeps its values."""
    from brainlab.lake import attach_lake, export_store
    from brainlab.store import open_writer, query
    from brainlab.transcripts.ingest import ingest_claude

    root = tmp_path / "projects"
    write(root / "-home-a" / "s1.jsonl", [
        assistant("s1", "2026-06-01T10:00:00.000Z", "m1", "r1", usage(10, 5)),
        assistant("s1", "2026-06-01T10:01:00.000Z", "m2", "r2", usage(20, 5),
                  attributionPlugin="plug")])
    db = tmp_path / "a.duckdb"
    con = open_writer(db)
    try:
        ingest_claude(con, root, workers=1)
    finally:
        con.close()
    lake = tmp_path / "lake"
    export_store(db, lake, "alice", "m")
    export_store(db, lake, "alice", "newer")
    (old,) = (lake / "cc_request_lines" / "user=alice" / "machine=m").glob("*.parquet")
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * EXCLUDE (plugin, skill, price_version) FROM read_parquet("
                f"'{old}')) TO '{old}.tmp' (FORMAT parquet)")
    os.replace(f"{old}.tmp", old)
    team = tmp_path / "team.duckdb"
    summary = attach_lake(lake, team)
    assert not summary.bad_files
    assert query(team, "SELECT sum(requests) AS n FROM usage_daily")["n"][0] == 2  # one copy
    lines = query(team, "SELECT count(*) AS n, count(plugin) AS p, count(price_version) AS v"
                        " FROM cc_request_lines")
    assert tuple(lines.iloc[0]) == (4, 1, 2)  # the old file's two lines: NULL; the newer's kept
