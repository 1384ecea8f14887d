"""Benchmark: what the context-broker block hook costs the transcript parser's hot path.

Usage:
    PYTHONPATH=. python benchmarks/bench_claude_broker.py [--size-mb 100] [--dir /tmp/cc-broker]
        [--corpus /work/shared/corpora/claude-code/projects]

On transcripts from bench_claude_ingest's generator (every assistant line holds 50-2,000
characters of filler text: a worst case, real assistant texts are a small share of the bytes)
and on a real corpus when one is given, prints:

- the parse time of every line (``claude_read._read``, no database), the baseline;
- the time of the hook's own tests over the same lines (``claude_broker.marked`` on each
  assistant text, ``subagent_answer`` on each user line), measured alone, and its share;
- the whole parse with the hook versus with its tests answering "no" (noisy on a shared
  machine: the isolated figure is the one to read).

Then it plants one inhale block per generated file and checks every block is found.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import time
from pathlib import Path

import orjson
from bench_claude_ingest import generate
from benchkit import emit

from brainlab.transcripts import broker as claude_broker
from brainlab.transcripts import build
from brainlab.transcripts import discovery as claude_files
from brainlab.transcripts.scan import _read  # noqa: PLC2701  (record branch's module this round)

BLOCK = ('{"type":"assistant","sessionId":"s","timestamp":"2026-03-02T10:00:00.000Z",'
         '"message":{"id":"m","content":[{"type":"text","text":"Context-broker \\u2014 '
         'inhale sprint b-1\\n\\nSource map :\\n  dev \\u2192 [\\"a.ts\\"]\\n"}]}}\n')


def parse_all(files: list[Path]) -> tuple[float, int]:
    """Seconds to parse every line of ``files`` (GC off, as the loader runs); blocks found."""
    gc.collect()
    gc.disable()
    try:
        start, blocks = time.perf_counter(), 0
        for path in files:
            chunk = build.Chunk()
            _read(path, 0, 0, path.stat().st_size, build.FileContext.of(path), chunk)
            blocks += len(chunk.broker.get("broker_blocks", ()))
        return time.perf_counter() - start, blocks
    finally:
        gc.enable()


def hook_inputs(files: list[Path]) -> tuple[list, list]:
    """The assistant texts and user lines the hook's tests see."""
    texts, users = [], []
    for path in files:
        for raw in path.read_bytes().split(b"\n"):
            try:
                obj = orjson.loads(raw) if raw.strip() else None
            except orjson.JSONDecodeError:
                continue
            if not isinstance(obj, dict):
                continue
            message = obj.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            if obj.get("type") == "assistant" and isinstance(content, list):
                texts += [b.get("text") for b in content
                          if isinstance(b, dict) and b.get("type") != "tool_use"]
            elif obj.get("type") == "user":
                users.append(obj)
    return texts, users


def measure(label: str, files: list[Path], rounds: int) -> None:
    """Print the baseline parse, the hook's isolated cost and the A/B parse for ``files``."""
    mb = sum(p.stat().st_size for p in files) / 1e6
    texts, users = hook_inputs(files)
    hook = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for text in texts:
            claude_broker.marked(text)
        for line in users:
            claude_broker.subagent_answer(line)
        hook = min(hook, time.perf_counter() - start)
    real = (claude_broker.marked, claude_broker.subagent_answer)
    best = {"hook": float("inf"), "baseline": float("inf")}
    for round_no in range(rounds):
        for name in ("baseline", "hook")[:: 1 if round_no % 2 else -1]:
            if name == "baseline":
                claude_broker.marked = claude_broker.subagent_answer = lambda _: False
            else:
                claude_broker.marked, claude_broker.subagent_answer = real
            best[name] = min(best[name], parse_all(files)[0])
    claude_broker.marked, claude_broker.subagent_answer = real
    text_mb = sum(len(t) for t in texts if isinstance(t, str)) / 1e6
    print(f"[{label}] {len(files)} files, {mb:.1f} MB ({text_mb:.1f} MB of assistant text)")
    print(f"  parse, baseline      : {best['baseline']:6.3f} s  {mb / best['baseline']:6.1f} MB/s")
    print(f"  hook tests, isolated : {hook:6.3f} s  = {100 * hook / best['baseline']:.1f}% "
          "of the baseline parse")
    print(f"  parse, with the hook : {best['hook']:6.3f} s  "
          f"({100 * (best['hook'] / best['baseline'] - 1):+.1f}%, best of {rounds}, noisy)")
    emit("claude_broker", label=label, files=len(files), mb=mb, baseline_s=best["baseline"],
         hook_isolated_s=hook, with_hook_s=best["hook"])


def main() -> int:
    """Generate, measure on generated and real transcripts, check planted blocks are found."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=float, default=100)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/cc-broker-bench"))
    parser.add_argument("--corpus", type=Path,
                        default=Path("/work/shared/corpora/claude-code/projects"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    shutil.rmtree(args.dir, ignore_errors=True)
    generate(args.dir, int(args.size_mb * 1e6))
    files, _ = claude_files.discover(args.dir)
    measure("generated (worst case)", files, args.rounds)
    if args.corpus.is_dir():
        measure(f"corpus {args.corpus}", claude_files.discover(args.corpus)[0], args.rounds)
    for path in files:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(BLOCK)
    _, found = parse_all(files)
    print(f"planted one block per generated file: {found} found in {len(files)} files")
    shutil.rmtree(args.dir, ignore_errors=True)
    return 0 if found == len(files) else 1


if __name__ == "__main__":
    raise SystemExit(main())
