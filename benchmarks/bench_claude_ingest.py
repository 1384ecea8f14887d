"""Benchmark: `brainlab ingest claude --daily` against ccusage 20.0.24, interleaved (issue 12).

Usage:
    PYTHONPATH=. python benchmarks/bench_claude_ingest.py [--repeat 3] [--size-gb 1.0]
        [--copies 30] [--corpus ../shared/corpora/claude-code] [--dir /tmp/cc-bench]
        [--ccusage-dir /work/ccusage] [--trees corpus,synthetic] [--single-gb 0]
        [--no-orjson-baseline] [--before REV] [--keep]

Two trees: the real corpus copied ``--copies`` times with rewritten ids (message, request and
session ids, so nothing deduplicates across copies), and a synthetic tree of ``--size-gb``.
On each tree, every round runs, one after the other (interleaved, so a busy machine slows
all alike): brainlab's cold ``ingest claude --daily`` (one process, a new store) first with an
empty cache (it builds the empty-store template, ``store/template.py``, in ``DIR/cache``) and
then as usual (the new store copied from that template), ccusage's
native binary ``claude daily --json --offline``, the orjson-only parser as the baseline of
the msgspec one (brainlab with the fast path switched off, same command), ``brainlab usage
daily`` on the ingested store, a run with nothing new (the fixed floor of every incremental
run: start-up, discovery, store open and close) and an incremental run after appending 1%
(undone after the round). Each is a separate process measured with wait4: wall, CPU seconds (with its worker
processes) and the largest resident set of the process tree. Prints median and min-max of
``--repeat`` rounds, and whether brainlab's per-day tokens equal ccusage's.
``--before REV`` adds the same cold, nothing-new and +1% commands run with the code of git
revision REV (its ``brainlab`` package checked out apart, on a store of its own),
interleaved too: a before/after in one run.
``--single-gb N`` also measures the peak memory of ingesting ONE transcript of N GB.
Commands run as from a user's shell: bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed,
the packages compiled first), see :func:`user_env`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit import checkout, emit, median_span

FILLER = "".join(random.Random(0).choice("abcdefghij klmnop\n") for _ in range(64_000))
REPO = Path(__file__).resolve().parent.parent


def _ts(day: int, second: int) -> str:
    h, rest = divmod(second % 86_400, 3600)
    m, s = divmod(rest, 60)
    return f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T{h:02d}:{m:02d}:{s:02d}.000Z"


def session_lines(rng: random.Random, sid: str, day: int, calls: int, start_call: int = 0,
                  agent: str | None = None):
    """Yield JSONL lines of one session: each API call as 2-3 lines plus a tool result."""
    base = {"sessionId": sid, "cwd": "/home/user/projets/bench", "version": "2.0.42",
            "userType": "external", "isSidechain": agent is not None}
    if agent:
        base["agentId"] = agent
    for c in range(start_call, start_call + calls):
        t = _ts(day, 30_000 + c * 7)
        msg, req = f"msg_{sid[:8]}{agent or ''}{c:06d}", f"req_{sid[:8]}{agent or ''}{c:06d}"
        u = {"input_tokens": rng.randint(1, 20),
             "cache_creation_input_tokens": rng.randint(0, 4000),
             "cache_read_input_tokens": rng.randint(10_000, 150_000),
             "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
             "output_tokens": 0}
        u["cache_creation"]["ephemeral_5m_input_tokens"] = u["cache_creation_input_tokens"]
        blocks = [{"type": "text", "text": FILLER[: rng.randint(50, 2000)]},
                  {"type": "tool_use", "id": f"toolu_{msg}", "name": "Read",
                   "input": {"file_path": f"/home/user/projets/bench/src/f{c % 50}.py"}}]
        for i, block in enumerate(blocks):
            u = dict(u, output_tokens=rng.randint(100, 3000) if i == len(blocks) - 1 else 5)
            yield json.dumps({**base, "type": "assistant", "timestamp": t, "requestId": req,
                              "message": {"id": msg, "type": "message", "role": "assistant",
                                          "model": "claude-opus-4-5-20251101",
                                          "content": [block], "usage": u}},
                             separators=(",", ":"))
        size = int(rng.paretovariate(1.2) * 1500)
        body = (FILLER * (1 + size // len(FILLER)))[:size]
        yield json.dumps({**base, "type": "user", "timestamp": t, "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{msg}",
                                         "content": body}]}}, separators=(",", ":"))


def generate(root: Path, size_bytes: int, seed: int = 1) -> tuple[int, int]:
    """Write sessions (with subagent files) until ``size_bytes``; return (files, bytes)."""
    rng = random.Random(seed)
    projects = root / "projects"
    files = written = n = 0
    while written < size_bytes:
        sid = f"{rng.getrandbits(128):032x}"
        folder = projects / f"-home-user-projets-p{n % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{sid}.jsonl"
        with open(path, "w") as handle:
            for line in session_lines(rng, sid, n % 300, rng.randint(200, 1200)):
                handle.write(line + "\n")
        written += path.stat().st_size
        files += 1
        if n % 3 == 0:
            sub = folder / sid / "subagents"
            sub.mkdir(parents=True, exist_ok=True)
            agent = f"a{rng.getrandbits(40):010x}"
            sub_path = sub / f"agent-{agent}.jsonl"
            with open(sub_path, "w") as handle:
                for line in session_lines(rng, sid, n % 300, rng.randint(20, 200), agent=agent):
                    handle.write(line + "\n")
            (sub / f"agent-{agent}.meta.json").write_text('{"agentType":"Explore"}')
            written += sub_path.stat().st_size
            files += 1
        n += 1
    return files, written


def append_one_percent(root: Path, total: int, seed: int = 2) -> int:
    """Grow some files by new tails and add new files: about 1% of ``total`` bytes."""
    rng = random.Random(seed)
    target, added = total // 100, 0
    mains = sorted(p for p in root.rglob("*.jsonl") if "subagents" not in p.parts)
    for path in rng.sample(mains, k=min(10, len(mains))):
        with open(path, "a") as handle:
            for line in session_lines(rng, path.stem, 1, 40, start_call=100_000):
                handle.write(line + "\n")
                added += len(line) + 1
    while added < target:
        sid = f"{rng.getrandbits(128):032x}"
        path = root / "projects" / "-home-user-projets-new" / f"{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as handle:
            for line in session_lines(rng, sid, 299, 60):
                handle.write(line + "\n")
        added += path.stat().st_size
    return added



_UUID = re.compile(rb"([0-9a-f]{6})[0-9a-f]{2}(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


_ID = re.compile(rb'"(id|requestId)":"([a-z]{2,9}_)?')


def _rewrite(data: bytes, tag: bytes) -> bytes:
    """Session uuids, message ids and request ids made distinct per copy.

    The tag goes after an id's prefix (``msg_01X`` -> ``msg_k0001X``), so the copies keep the
    shape of the API's ids, as a real tree of that size would.
    """
    data = _UUID.sub(rb"\g<1>" + tag + rb"\g<2>", data)
    return _ID.sub(rb'"\1":"\2k' + tag, data)


def copy_corpus(corpus: Path, root: Path, copies: int) -> tuple[int, int]:
    """Copy the corpus ``copies`` times, ids rewritten per copy; return (files, bytes)."""
    files = written = 0
    sources = sorted(p for p in corpus.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json"))
    for k in range(copies):
        tag = f"{k:02x}".encode()
        for src in sources:
            rel = _rewrite(str(src.relative_to(corpus)).encode(), tag).decode()
            dest = root / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(_rewrite(src.read_bytes(), tag))
            if dest.suffix == ".jsonl":
                files += 1
                written += dest.stat().st_size
    return files, written


def user_env(extra: dict | None = None) -> dict:
    """This environment as a user's shell has it: bytecode caching on.

    Some sandboxes set PYTHONDONTWRITEBYTECODE=1, which makes every brainlab module compile
    from source at each start (tens of ms per process, workers included); a user's Python
    writes .pyc files once. Removed for every measured command (ccusage ignores it).
    """
    env = dict(os.environ, **(extra or {}))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_package(root: Path) -> None:
    """Write the .pyc files of the ``brainlab`` package under ``root`` (as a first run would)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "brainlab")],
                   check=True, env=user_env(), stdout=subprocess.DEVNULL)


def own_rss_mb() -> float:
    """This process's resident size now (MB): the floor of every peak RSS that wait4 reports,
    since the kernel counts the forking process's pages in the child's peak at exec."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def measure(cmd: list[str], env: dict | None = None, cwd: Path | None = None) -> dict:
    """Run ``cmd``; wall s, CPU s (itself and its waited-for children), peak RSS MB, stdout."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, cwd=cwd,
                                env=user_env(env))
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{text[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss": usage.ru_maxrss / 1024, "out": text}


ORJSON_ONLY = """
import sys
from brainlab.transcripts import fast as claude_fast
claude_fast.parse_line = lambda *args: False  # every line through the orjson path
from brainlab.cli import main
sys.argv[0] = "brainlab"
main()
"""



def brainlab(*args: str, orjson_only: bool = False) -> list[str]:
    if orjson_only:
        return [sys.executable, "-c", ORJSON_ONLY, *args]
    return [sys.executable, "-m", "brainlab.cli", *args]


def ccusage_cmd(ccusage_dir: Path) -> list[str] | None:
    launcher = ccusage_dir / "node_modules" / ".bin" / "ccusage"
    native = ccusage_dir / "node_modules" / "@ccusage" / "ccusage-linux-x64" / "bin" / "ccusage"
    if not launcher.exists():
        return None
    subprocess.run([str(launcher), "--version"], capture_output=True, cwd=ccusage_dir)  # chmod
    return [str(native if os.access(native, os.X_OK) else launcher), "claude", "daily", "--json",
            "--offline", "--timezone", "UTC"]


def append_and_undo(tree: Path, total: int):
    """Append about 1% (tails and new files); return a function undoing it."""
    sizes = {p: p.stat().st_size for p in tree.rglob("*.jsonl")}
    append_one_percent(tree, total)

    def undo() -> None:
        for p in list(tree.rglob("*.jsonl")):
            if p not in sizes:
                p.unlink()
            elif p.stat().st_size != sizes[p]:
                os.truncate(p, sizes[p])
    return undo


def bench_tree(name: str, tree: Path, total: int, work: Path, args) -> None:
    """Interleaved rounds on one tree; print medians and ranges."""
    cache = work / "cache"  # the empty-store template (store/template.py), under --dir
    env = {"PYTHONPATH": str(REPO), "CLAUDE_CONFIG_DIR": str(tree),
           "BRAINLAB_CACHE_DIR": str(cache)}
    cc = ccusage_cmd(args.ccusage_dir)
    db = work / f"{name}.duckdb"
    steps: dict[str, list[dict]] = {}
    before_db = work / "before.duckdb"
    # the earlier code keeps its own template cache, built once here: the rounds empty this
    # code's cache for its first run, and the earlier code's template (another catalogue)
    # was then rebuilt in every cold "before" run, which no user pays twice
    before_env = dict(env, PYTHONPATH=str(args.before_code),
                      BRAINLAB_CACHE_DIR=str(work / "cache-before")) if args.before else env
    if args.before:
        empty = work / "empty-tree"
        empty.mkdir(exist_ok=True)
        subprocess.run(brainlab("ingest", "claude", str(empty), "--db",
                                str(work / "warm.duckdb")), env=user_env(before_env),
                       cwd=args.before_code, capture_output=True, check=False)
        (work / "warm.duckdb").unlink(missing_ok=True)

    def before(label: str, *extra: str) -> None:
        """The same step with the code of the --before revision, on its own store."""
        if args.before:
            steps.setdefault(f"before: {label}", []).append(measure(
                brainlab("ingest", "claude", str(tree), "--db", str(before_db), *extra),
                before_env, cwd=args.before_code))

    for _ in range(args.repeat):
        db.unlink(missing_ok=True)
        Path(str(db) + ".wal").unlink(missing_ok=True)  # an incremental run may leave its WAL
        shutil.rmtree(cache, ignore_errors=True)  # the very first run: builds the template
        steps.setdefault("same, first run (empty template cache)", []).append(
            measure(brainlab("ingest", "claude", str(tree), "--db", str(db), "--daily"), env))
        db.unlink()
        steps.setdefault("brainlab ingest claude --daily (cold)", []).append(
            measure(brainlab("ingest", "claude", str(tree), "--db", str(db), "--daily"), env))
        shutil.copy(db, work / "cold.duckdb")
        if cc:
            steps.setdefault("ccusage claude daily --json --offline", []).append(
                measure(cc, env, cwd=args.ccusage_dir))
        if args.orjson_baseline:
            base_db = work / "orjson.duckdb"
            base_db.unlink(missing_ok=True)
            steps.setdefault("baseline: same, orjson path only", []).append(measure(brainlab(
                "ingest", "claude", str(tree), "--db", str(base_db), "--daily",
                orjson_only=True), env))
            base_db.unlink()
        for leftover in (before_db, Path(str(before_db) + ".wal")):
            leftover.unlink(missing_ok=True)
        before(f"cold, code of {args.before}", "--daily")  # the same command, earlier code
        steps.setdefault("brainlab usage daily (ingested store)", []).append(
            measure(brainlab("usage", "daily", "--db", str(db)), env))
        # the fixed floor of any incremental run: start-up, discovery, store open and close
        steps.setdefault("brainlab ingest claude, nothing new", []).append(
            measure(brainlab("ingest", "claude", str(tree), "--db", str(db)), env))
        before("nothing new")
        undo = append_and_undo(tree, total)
        try:
            steps.setdefault("brainlab ingest claude, +1% appended", []).append(
                measure(brainlab("ingest", "claude", str(tree), "--db", str(db)), env))
            before("+1% appended")
        finally:
            undo()
    print(f"\n{name}: {total / 1e9:.2f} GB, {args.repeat} interleaved rounds; median (min-max)")
    print(f"  {'step':42} {'wall':>22} {'CPU':>22} {'peak RSS (largest process)':>28}")
    for step, runs in steps.items():
        print(f"  {step:42} {median_span([r['wall'] for r in runs]):>22}"
              f" {median_span([r['cpu'] for r in runs]):>22}"
              f" {median_span([r['rss'] for r in runs], 'MB'):>28}")
    cold = statistics.median(r["wall"] for r in steps["brainlab ingest claude --daily (cold)"])
    incr = statistics.median(r["wall"] for r in steps["brainlab ingest claude, +1% appended"])
    usage = statistics.median(r["wall"] for r in steps["brainlab usage daily (ingested store)"])
    floor = statistics.median(r["wall"] for r in steps["brainlab ingest claude, nothing new"])
    print(f"  incremental / cold: {100 * incr / cold:.1f} %; nothing new / cold (the floor):"
          f" {100 * floor / cold:.1f} %; (incremental - floor) / cold:"
          f" {100 * (incr - floor) / cold:.1f} %")
    emit("claude_ingest", tree=name, gb=total / 1e9, cold_s=cold, incremental_s=incr,
         nothing_new_s=floor, usage_daily_s=usage,
         wall_median_s={step: statistics.median(r["wall"] for r in runs)
                        for step, runs in steps.items()})
    print(f"  (a peak RSS reads at least this benchmark's own, {own_rss_mb():.0f} MB now: Linux"
          " records the size of the process that started a command)")
    if cc:
        ccu = statistics.median(r["wall"] for r in steps["ccusage claude daily --json --offline"])
        first = statistics.median(
            r["wall"] for r in steps["same, first run (empty template cache)"])
        print(f"  first run (empty cache) / ccusage: {first / ccu:.2f}x")
        print(f"  cold ingest + daily / ccusage: {cold / ccu:.2f}x;"
              f" ccusage / brainlab usage daily: {ccu / usage:.1f}x")
        compare_days(work / "cold.duckdb", measure(cc, env, cwd=args.ccusage_dir)["out"], env)


def compare_days(db: Path, ccusage_out: str, env: dict) -> None:
    """Per-day tokens of brainlab's store against ccusage's JSON."""
    ours = json.loads(measure(brainlab("usage", "daily", "--db", str(db), "--json"), env)["out"])
    mine = {str(r["day"])[:10]: int(r["total_tokens"]) for r in ours}
    theirs = {d["date"]: int(d["totalTokens"]) for d in json.loads(ccusage_out)["daily"]}
    same = mine == theirs
    print(f"  per-day tokens identical to ccusage: {same} ({len(mine)} days,"
          f" {sum(mine.values()):,} tokens; ccusage {sum(theirs.values()):,})")


SINGLE = """
import json, resource, sys
from brainlab.transcripts.ingest import ingest_claude_db
s = ingest_claude_db(sys.argv[1], sys.argv[2])
print(json.dumps({"rows": s.rows, "bytes": s.bytes_read,
                  "main_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def bench_single(work: Path, size_gb: float) -> None:
    """Peak memory of ingesting one transcript of ``size_gb`` (issue 10 item 15)."""
    tree = work / "single"
    path = tree / "projects" / "-home-user-projets-one" / "0123abcd.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    rng, call = random.Random(5), 0
    with open(path, "w") as handle:
        while handle.tell() < size_gb * 1e9:
            for line in session_lines(rng, "0123abcd", 3, 2000, start_call=call):
                handle.write(line + "\n")
            call += 2000
    size = path.stat().st_size
    db = work / "single.duckdb"
    run = measure([sys.executable, "-c", SINGLE, str(db), str(tree)], {"PYTHONPATH": str(REPO)})
    got = json.loads(run["out"].strip().splitlines()[-1])
    print(f"\none transcript of {size / 1e9:.2f} GB: peak RSS {run['rss']:.0f} MB (largest"
          f" process), {run['wall']:.1f} s wall, {got['rows']:,} rows")
    emit("claude_ingest_single", gb=size / 1e9, peak_rss_mb=run["rss"], wall_s=run["wall"],
         rows=got["rows"])
    shutil.rmtree(tree)
    db.unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--copies", type=int, default=30)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpora"
                        / "claude-code")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/cc-bench"))
    parser.add_argument("--ccusage-dir", type=Path, default=Path("/work/ccusage"))
    parser.add_argument("--trees", default="corpus,synthetic")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-orjson-baseline", dest="orjson_baseline", action="store_false")
    parser.add_argument("--single-gb", type=float, default=0.0)
    parser.add_argument("--before", default="", help="also run the cold ingest with the code"
                        " of this git revision (e.g. main), interleaved")
    parser.add_argument("--keep", action="store_true", help="keep the trees built under --dir"
                        " and reuse those a previous --keep run left there (same options)")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        args.corpus = Path("/work/shared/corpora/claude-code")
    if args.dir.exists() and not args.keep:
        shutil.rmtree(args.dir)
    args.dir.mkdir(parents=True, exist_ok=True)
    if args.before:
        shutil.rmtree(args.dir / "before-code", ignore_errors=True)
        args.before_code = checkout(args.before, args.dir / "before-code")
        compile_package(args.before_code)
    compile_package(REPO)
    try:
        for name in filter(None, args.trees.split(",")):
            tree, built = args.dir / name, args.dir / f"{name}.built.json"
            t0 = time.perf_counter()
            if args.keep and tree.is_dir() and built.is_file():
                files, total = json.loads(built.read_text())
                print(f"{name}: {files} files, {total / 1e9:.2f} GB (kept from an earlier run)")
            else:
                shutil.rmtree(tree, ignore_errors=True)
                if name == "corpus":
                    files, total = copy_corpus(args.corpus, tree, args.copies)
                else:
                    files, total = generate(tree, int(args.size_gb * 1e9))
                built.write_text(json.dumps([files, total]))
                print(f"{name}: {files} files, {total / 1e9:.2f} GB written in"
                      f" {time.perf_counter() - t0:.0f} s")
            bench_tree(name, tree, total, args.dir, args)
            if not args.keep:
                shutil.rmtree(tree)
        if args.single_gb:
            bench_single(args.dir, args.single_gb)
    finally:
        if not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
