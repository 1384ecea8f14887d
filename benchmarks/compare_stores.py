"""Compare the stores two checkouts build, relation by relation (issue 40: "stores identical").

Usage:
    python benchmarks/compare_stores.py --before /work/main [--after .] [--dir /tmp/cmp]
        [--corpus ../shared/corpora/claude-code] [--template ../shared/reference/cortex-template]

Each checkout (its own code, run by this Python with that checkout first on the path) builds
the same three stores in the same folder, one after the other: the demo (12 weeks, seed 7, as
``brainlab demo``), the real transcript corpus alone, and the template brain alone. Every
table and view of each store is summarised by DuckDB as its row count and an order-free hash
of its rows (``sum(hash(row))``), with the columns that record when or where a store was built
(``*ingested_at`` of the ingest log...) left out and floats rounded to 9 decimals (a parallel
sum's last bits vary from run to run). The stores are kept in ``DIR/build-<checkout>``. The
script prints each relation
whose summary differs, each one only one side has, and a last line: how many relations were
compared and how many differ. Not a speed figure: it lives beside the benchmarks because it
builds real stores from two checkouts, as they do.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from benchkit import emit

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" if (REPO.parent / "shared").is_dir() else Path("/work/shared")

# run inside a checkout (its reader, its schema): every relation of a store as its row count,
# an order-free hash of its rows and its columns (bench_live_load.py summarises with it too)
SUMMARISE = r"""
VOLATILE = ("ingested_at", "checked_at", "built_at", "mtime", "inode", "run_id")

def summarise_store(db, prefix=""):
    from brainlab.store.connection import reader

    summary = {}
    with reader(db) as con:
        rels = con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' UNION "
            "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'"
        ).fetchall()
        for (rel,) in sorted(rels):
            typed = [(c, t) for c, t in con.execute(
                "SELECT column_name, data_type FROM information_schema.columns"
                " WHERE table_name = ? ORDER BY ordinal_position", [rel]).fetchall()
                     if not any(v in c for v in VOLATILE)]
            cols = [c for c, _ in typed]
            # a float sum's last bits depend on the order threads add it up: 9 digits kept
            row = ", ".join(f'round("{c}", 9)' if t in ("DOUBLE", "FLOAT", "REAL")
                            else '"' + c.replace('"', '""') + '"' for c, t in typed)
            try:
                n, h = con.execute(
                    f'SELECT count(*), coalesce(sum(hash(({row})))::VARCHAR, \'0\')'
                    f' FROM "{rel}"' if cols else f'SELECT count(*), \'0\' FROM "{rel}"'
                ).fetchone()
                summary[f"{prefix}{rel}"] = [n, h, cols]
            except Exception as exc:
                summary[f"{prefix}{rel}"] = [None, f"error: {type(exc).__name__}: {exc}"[:200],
                                             cols]
    return summary
"""

# run inside each checkout: build the stores, then summarise every relation
BUILD = SUMMARISE + r"""
import json, sys
from pathlib import Path
from brainlab.demo import build_store
from brainlab.store import ingest as store_ingest, open_writer
from brainlab.transcripts.ingest import ingest_claude

out, corpus, template = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])

def build_demo(folder):
    build_store(folder / "brain", folder / "brainlab.duckdb", weeks=12, seed=7, workers=1)

def build_corpus(folder):
    con = open_writer(folder / "brainlab.duckdb")
    try:
        ingest_claude(con, corpus, workers=1)
    finally:
        con.close()

def build_template(folder):
    store_ingest.ingest_brain(folder / "brainlab.duckdb", template)

summary = {}
for name, build in (("demo", build_demo), ("corpus", build_corpus),
                    ("template", build_template)):
    folder = out / name
    folder.mkdir(parents=True)
    build(folder)
    summary.update(summarise_store(folder / "brainlab.duckdb", f"{name}."))
import brainlab
summary["_code"] = [0, str(Path(brainlab.__file__).parent), []]
(out / "summary.json").write_text(json.dumps(summary))
"""


def summarise(checkout: Path, folder: Path, corpus: Path, template: Path) -> dict:
    """Build the three stores with ``checkout``'s code in ``folder``; their relations' summaries."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve()), "BRAINLAB_DEBUG": "1"}
    for name in ("BRAINLAB_CONFIG", "BRAINLAB_SETTINGS", "BRAINLAB_DB", "BRAINLAB_PRICES"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-c", BUILD, str(folder), str(corpus), str(template)],
                          cwd=folder, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: the build failed:\n{done.stderr[-3000:]}")
    found = json.loads((folder / "summary.json").read_text())
    kept = folder.parent / f"{folder.name}-{checkout.resolve().name}"
    shutil.rmtree(kept, ignore_errors=True)
    folder.rename(kept)  # the stores stay for a closer look
    print(f"{checkout}: built with {found.pop('_code')[1]}", flush=True)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="The baseline checkout.")
    parser.add_argument("--after", type=Path, default=REPO, help="The changed checkout.")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/brainlab-compare-stores"))
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpora" / "claude-code")
    parser.add_argument("--template", type=Path,
                        default=SHARED / "reference" / "cortex-template")
    args = parser.parse_args()
    before = summarise(args.before, args.dir / "build", args.corpus, args.template)
    after = summarise(args.after, args.dir / "build", args.corpus, args.template)
    differ = 0
    for key in sorted(set(before) | set(after)):
        if key not in after:
            print(f"only before: {key} ({before[key][0]} rows)")
        elif key not in before:
            print(f"only after:  {key} ({after[key][0]} rows)")
        elif before[key][:2] != after[key][:2] or before[key][2] != after[key][2]:
            differ += 1
            print(f"differs:     {key}: rows {before[key][0]} -> {after[key][0]},"
                  f" hash {before[key][1]} -> {after[key][1]}"
                  + ("" if before[key][2] == after[key][2] else " (columns differ)"))
    both = len(set(before) & set(after))
    print(f"{both} relations in both builds, {differ} differ;"
          f" {len(set(before) - set(after))} only before, {len(set(after) - set(before))}"
          " only after")
    emit("compare_stores", relations=both, differ=differ,
         only_before=len(set(before) - set(after)), only_after=len(set(after) - set(before)))


if __name__ == "__main__":
    main()
