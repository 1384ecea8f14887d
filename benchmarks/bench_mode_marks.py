"""Benchmark: what the ADR-019 redirection hook (cc_marks kind redirect) costs the parser.

Usage:
    PYTHONPATH=. python benchmarks/bench_mode_marks.py [--size-mb 100] [--dir /tmp/cc-modes]
        [--corpus /work/shared/corpora/claude-code/projects] [--rounds 5]

On transcripts from bench_claude_ingest's generator (every assistant line holds 50-2,000
characters of filler text: a worst case) and on a real corpus when one is given, prints:

- the parse time of every line (``claude_ingest._read``, no database) with the hook answering
  "no" at once: the baseline;
- the hook alone (``claude_marks.redirect_mark`` on every main-chain assistant text: the
  lowercase prefilter, then the phrase regex on texts holding a hint word) and its share;
- the whole parse with the hook (A/B interleaved, best of the rounds; noisy on a shared
  machine: the isolated figure is the one to read).

Then it appends one French redirection per generated file and checks it is found in each
main-chain file (a subagent's text is not the session redirecting). Last, on a ``--weeks``
synthetic brain with its transcripts, ``brainlab check PATH --db DB`` with every rule against
the same check ignoring the mode rules (MOD, BUD, SES002), interleaved, min-max of the rounds.
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import tempfile
import time
from pathlib import Path

from bench_claude_broker import hook_inputs  # (assistant texts of the files)
from bench_claude_ingest import generate
from benchkit import emit

from brainlab.demo import build_store
from brainlab.rules.check import check
from brainlab.transcripts import build
from brainlab.transcripts import discovery as claude_files
from brainlab.transcripts import marks as claude_marks
from brainlab.transcripts.scan import _read  # noqa: PLC2701  (record branch's module this round)

REDIRECT = json.dumps({
    "type": "assistant", "sessionId": "s", "timestamp": "2026-03-02T10:00:00.000Z",
    "message": {"id": "m-redirect", "content": [{"type": "text", "text": (
        "Ce truc appartient à une session projet — ouvre une fenêtre dédiée.")}]}},
    ensure_ascii=False) + "\n"


def parse_all(files: list[Path]) -> tuple[float, int]:
    """Seconds to parse every line of ``files`` (GC off, as the loader runs); redirects found."""
    gc.collect()
    gc.disable()
    try:
        start, found = time.perf_counter(), 0
        for path in files:
            chunk = build.Chunk()
            _read(path, 0, 0, path.stat().st_size, build.FileContext.of(path), chunk)
            found += sum(1 for m in chunk.marks if m[3] == "redirect")
        return time.perf_counter() - start, found
    finally:
        gc.enable()


def measure(label: str, files: list[Path], rounds: int) -> None:
    """Print the baseline parse, the hook's isolated cost and the A/B parse for ``files``."""
    mb = sum(p.stat().st_size for p in files) / 1e6
    texts, _users = hook_inputs(files)
    hook = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for text in texts:
            claude_marks.redirect_mark(text, "s", None, None, "p", 1)
        hook = min(hook, time.perf_counter() - start)
    real = claude_marks.redirect_mark
    best = {"hook": float("inf"), "baseline": float("inf")}
    for round_no in range(rounds):
        for name in ("baseline", "hook")[:: 1 if round_no % 2 else -1]:
            claude_marks.redirect_mark = (lambda *_: None) if name == "baseline" else real
            best[name] = min(best[name], parse_all(files)[0])
    claude_marks.redirect_mark = real
    text_mb = sum(len(t) for t in texts if isinstance(t, str)) / 1e6
    print(f"[{label}] {len(files)} files, {mb:.1f} MB ({text_mb:.1f} MB of assistant text)")
    print(f"  parse, baseline      : {best['baseline']:6.3f} s  {mb / best['baseline']:6.1f} MB/s")
    print(f"  hook alone, isolated : {hook:6.3f} s  = {100 * hook / best['baseline']:.1f}% "
          "of the baseline parse")
    print(f"  parse, with the hook : {best['hook']:6.3f} s  "
          f"({100 * (best['hook'] / best['baseline'] - 1):+.1f}%, best of {rounds}, noisy)")
    emit("mode_marks", label=label, files=len(files), mb=mb, baseline_s=best["baseline"],
         hook_isolated_s=hook, with_hook_s=best["hook"])


def time_check(weeks: int, rounds: int) -> None:
    """``brainlab check --db`` on a synthetic brain: every rule versus without the mode rules."""
    with tempfile.TemporaryDirectory() as tmp:
        root, db = Path(tmp) / "brain", Path(tmp) / "b.duckdb"
        build_store(root, db, weeks=weeks, seed=7, workers=1)
        times: dict[str, list[float]] = {"every rule": [], "without MOD/BUD/SES002": []}
        for round_no in range(rounds):
            for label in list(times)[:: 1 if round_no % 2 else -1]:
                ignore = ["MOD", "BUD", "SES002"] if label.startswith("without") else []
                start = time.perf_counter()
                check(root, ignore=ignore, db=db)
                times[label].append(time.perf_counter() - start)
    for label, runs in times.items():
        print(f"check --db, {weeks}-week brain, {label:24}: {min(runs):.2f}-{max(runs):.2f} s")


def main() -> int:
    """Generate, measure on generated and real transcripts, check planted redirects are found."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=float, default=100)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/cc-modes-bench"))
    parser.add_argument("--corpus", type=Path,
                        default=Path("/work/shared/corpora/claude-code/projects"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--weeks", type=int, default=12)
    args = parser.parse_args()
    shutil.rmtree(args.dir, ignore_errors=True)
    generate(args.dir, int(args.size_mb * 1e6))
    files = claude_files.discover(args.dir)[0]
    measure("generated (worst case)", files, args.rounds)
    if args.corpus.is_dir():
        measure(f"corpus {args.corpus}", claude_files.discover(args.corpus)[0], args.rounds)
    main_files = [p for p in files if build.FileContext.of(p).agent_id is None]
    _, before = parse_all(files)
    for path in files:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(REDIRECT)
    _, found = parse_all(files)
    print(f"planted one redirection per generated file: {found - before} found, one per "
          f"main-chain file ({len(main_files)} of {len(files)}; subagent files do not count)")
    shutil.rmtree(args.dir, ignore_errors=True)
    time_check(args.weeks, args.rounds)
    return 0 if found - before == len(main_files) else 1


if __name__ == "__main__":
    raise SystemExit(main())
