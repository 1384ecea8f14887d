"""Benchmark: `ingest otel` on hostile files, peak memory and time, old code and new (issue 47).

Usage:
    PYTHONPATH=. python benchmarks/bench_otel_bomb.py [--before REV] [--bomb-gb 2]
        [--lines-gb 2] [--line-mb 100] [--kill-gb 3] [--timeout 300] [--dir /tmp/otel-bomb]

Four files, each ingested by ``brainlab ingest otel`` as a user runs it (one process, a copy
of a store made beforehand), its peak memory the ``ru_maxrss`` of ``os.wait4``:

- ``stream bomb``: a whole-file zstd stream (native compression), one JSON line of
  ``--bomb-gb`` GB of spaces, compressed to kilobytes;
- ``frame bomb``: a length-prefixed file whose one zstd message decompresses to the same;
- ``short lines``: a zstd stream of ``--lines-gb`` GB of short export requests
  (``{"resourceLogs":[]}``), a few tens of KB compressed;
- ``long line``: one uncompressed JSON line of ``--line-mb`` MB (an attribute that long).

With ``--before REV`` the same four run with the ``brainlab`` package of git revision REV
(checked out apart), interleaved with the new code: a before/after in one run. A process
past ``--kill-gb`` of resident memory (polled every 50 ms) or ``--timeout`` seconds is killed
and reported so: the old code decompressed a bomb whole, and the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit import checkout, emit

REPO = Path(__file__).resolve().parent.parent
MB = 1 << 20



def write_inputs(folder: Path, bomb_gb: float, lines_gb: float, line_mb: int) -> dict[str, Path]:
    import zstandard

    folder.mkdir(parents=True, exist_ok=True)
    spaces = b" " * MB
    files = {}

    def compress_to(path: Path, head: bytes, block: bytes, total: int, tail: bytes) -> None:
        with open(path, "wb") as out:
            writer = zstandard.ZstdCompressor(level=3).stream_writer(out, closefd=False)
            writer.write(head)
            for _ in range(total // len(block)):
                writer.write(block)
            writer.write(tail)
            writer.close()

    path = folder / "stream-bomb.json.zst"
    compress_to(path, b'{"resourceLogs":[', spaces, int(bomb_gb * 1024) * MB, b"]}\n")
    files["stream bomb"] = path
    inner = folder / "frame.zst"
    compress_to(inner, b'{"resourceLogs":[', spaces, int(bomb_gb * 1024) * MB, b"]}")
    payload = inner.read_bytes()
    inner.unlink()
    path = folder / "frame-bomb.bin"
    path.write_bytes(len(payload).to_bytes(4, "big") + payload)
    files["frame bomb"] = path
    path = folder / "short-lines.json.zst"
    line = b'{"resourceLogs":[]}\n'
    compress_to(path, b"", line * (MB // len(line)), int(lines_gb * 1024) * MB, b"")
    files["short lines"] = path
    path = folder / "long-line.json"
    with open(path, "wb") as out:
        out.write(b'{"resourceLogs":[{"resource":{"attributes":[{"key":"x","value":'
                  b'{"stringValue":"')
        for _ in range(line_mb):
            out.write(b"a" * MB)
        out.write(b'"}}]},"scopeLogs":[]}]}\n')
    files["long line"] = path
    return files


def run(code: Path, cache: Path, store: Path, path: Path, kill_bytes: int,
        timeout: float) -> dict:
    """One ``brainlab ingest otel`` process: wall seconds, peak RSS, exit, killed or not."""
    env = {**os.environ, "PYTHONPATH": str(code), "BRAINLAB_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "brainlab.cli", "ingest", "otel", str(path),
                             "--db", str(store)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=store.parent)  # not the repo: -m
    # would import the checkout's brainlab from the current folder, whatever PYTHONPATH says
    killed = ""
    status = ru = None
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        try:
            rss = int(Path(f"/proc/{proc.pid}/statm").read_text().split()[1]) * os.sysconf(
                "SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            rss = 0
        if rss > kill_bytes:
            killed = f"killed past {kill_bytes / 1e9:.1f} GB"
        elif time.perf_counter() - start > timeout:
            killed = f"killed after {timeout:.0f} s"
        if killed:
            proc.send_signal(signal.SIGKILL)
            _, status, ru = os.wait4(proc.pid, 0)
            break
        time.sleep(0.05)
    wall = time.perf_counter() - start
    out = (proc.stdout.read() + proc.stderr.read()).decode(errors="replace")
    code_ = os.waitstatus_to_exitcode(status)
    return {"seconds": round(wall, 2), "peak_mb": round(ru.ru_maxrss / 1024), "exit": code_,
            "killed": killed, "said": out.strip().splitlines()[-1][:140] if out.strip() else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="", help="also this git revision's code")
    parser.add_argument("--bomb-gb", type=float, default=2.0)
    parser.add_argument("--lines-gb", type=float, default=2.0)
    parser.add_argument("--line-mb", type=int, default=100)
    parser.add_argument("--kill-gb", type=float, default=3.0)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--dir", default="")
    args = parser.parse_args()
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="otel-bomb-"))
    files = write_inputs(work / "inputs", args.bomb_gb, args.lines_gb, args.line_mb)
    for name, path in files.items():
        print(f"{name:12} {path.stat().st_size / 1e3:12,.1f} KB on disk")
    versions = {"new": REPO}
    if args.before:
        shutil.rmtree(work / "before-code", ignore_errors=True)
        versions[f"before ({args.before})"] = checkout(args.before, work / "before-code")
    results: dict[str, dict[str, dict]] = {}
    for label, code in versions.items():  # a store per version, made before any timing
        cache = work / f"cache-{len(results)}"
        empty = work / f"empty-{len(results)}"
        empty.mkdir(exist_ok=True)
        subprocess.run([sys.executable, "-m", "brainlab.cli", "ingest", "otel", str(empty),
                        "--db", str(work / f"base-{len(results)}.duckdb")], check=True,
                       capture_output=True, cwd=work, env={**os.environ, "PYTHONPATH": str(code),
                                                 "BRAINLAB_CACHE_DIR": str(cache)})
        results[label] = {"code": code, "cache": cache,
                          "base": work / f"base-{len(results)}.duckdb"}
    table: dict[str, dict[str, dict]] = {name: {} for name in files}
    for name, path in files.items():  # interleaved: each file, old then new
        for label, spec in results.items():
            store = work / "run.duckdb"
            Path(f"{store}.wal").unlink(missing_ok=True)  # a killed run's log
            shutil.copy(spec["base"], store)
            table[name][label] = run(spec["code"], spec["cache"], store, path,
                                     int(args.kill_gb * 1e9), args.timeout)
            store.unlink(missing_ok=True)
            Path(f"{store}.wal").unlink(missing_ok=True)
    print(f"\n{'file':12} {'code':28} {'seconds':>8} {'peak MB':>8} {'exit':>5}  outcome")
    for name, runs in table.items():
        for label, r in runs.items():
            print(f"{name:12} {label:28} {r['seconds']:8.2f} {r['peak_mb']:8,} {r['exit']:5}"
                  f"  {r['killed'] or r['said']}")
    emit("otel_bomb", **{f"{name}|{label}": {k: r[k] for k in ("seconds", "peak_mb", "exit",
                                                                "killed")}
                         for name, runs in table.items() for label, r in runs.items()})
    if not args.dir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
