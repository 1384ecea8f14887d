"""Benchmark: what the context-broker block hook costs the transcript parser's hot path.

Usage:
    PYTHONPATH=. python benchmarks/bench_claude_broker.py [--size-mb 200] [--dir /tmp/cc-broker]

Generates transcripts with bench_claude_ingest's generator (text blocks and tool results of
filler text, none holding a block), then parses every file's lines (``claude_loader._read``,
no database) with the hook (claude_broker: a substring test on each assistant text and
tool_result) and, as the baseline in the same process, with the hook switched off. Prints the
best of several alternating rounds and the overhead. Then it plants one inhale block per file
and shows the blocks are found.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_claude_ingest import generate  # noqa: E402

from brainlab.sources import claude_broker, claude_code  # noqa: E402
from brainlab.sources.claude_loader import _read  # noqa: E402


def parse_all(files: list[Path]) -> tuple[float, int]:
    """Seconds to parse every line of ``files``; blocks found."""
    start, blocks = time.perf_counter(), 0
    for path in files:
        ctx = claude_code.FileContext.of(path)
        chunk = claude_code.Chunk()
        _read(path, 0, 0, path.stat().st_size, ctx, chunk)
        blocks += len(chunk.broker.get("broker_blocks", ()))
    return time.perf_counter() - start, blocks


def main() -> int:
    """Generate, time hooked vs unhooked parsing, print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=float, default=200)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/cc-broker-bench"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    shutil.rmtree(args.dir, ignore_errors=True)
    _, total = generate(args.dir, int(args.size_mb * 1e6))
    files = claude_code.discover(args.dir)
    mb = total / 1e6
    print(f"{len(files)} files, {mb:.0f} MB")
    hooked_marked, hooked_scan = claude_broker.marked, claude_code.claude_broker.scan_result
    best = {"hook": float("inf"), "baseline": float("inf")}
    for _ in range(args.rounds):
        for label in ("baseline", "hook"):
            if label == "baseline":  # the parser as it was before the hook
                claude_broker.marked = lambda text: False
                claude_broker.scan_result = lambda *a, **k: None
            else:
                claude_broker.marked, claude_broker.scan_result = hooked_marked, hooked_scan
            seconds, _ = parse_all(files)
            best[label] = min(best[label], seconds)
    claude_broker.marked, claude_broker.scan_result = hooked_marked, hooked_scan
    for label, seconds in best.items():
        print(f"{label:>8}: {seconds:6.2f} s  {mb / seconds:6.1f} MB/s")
    print(f"overhead: {100 * (best['hook'] / best['baseline'] - 1):+.1f}% (best of "
          f"{args.rounds}, same process, same files)")
    block = ('{"type":"assistant","sessionId":"s","timestamp":"2026-03-02T10:00:00.000Z",'
             '"message":{"id":"m","content":[{"type":"text","text":"Context-broker \\u2014 '
             'inhale sprint b-1\\n\\nSource map :\\n  dev \\u2192 [\\"a.ts\\"]\\n"}]}}\n')
    for path in files:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(block)
    _, found = parse_all(files)
    print(f"planted one block per file: {found} found in {len(files)} files")
    shutil.rmtree(args.dir, ignore_errors=True)
    return 0 if found == len(files) else 1


if __name__ == "__main__":
    raise SystemExit(main())
