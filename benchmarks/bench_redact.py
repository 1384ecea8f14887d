"""Benchmark: redact() today (detect-secrets rules + prefilter) against the previous hand-grown list.

Usage:
    PYTHONPATH=. python benchmarks/bench_redact.py [--corpus ../shared/corpora/claude-code]
        [--baseline-commit aa8a31b] [--repeat 3]

Strings: every JSON string value of every line of the real Claude Code corpus (what a
transcript can hand to redact: prompts, commands, paths, outputs), deduplicated, plus the same
strings again (so the memo of short strings is exercised as in an ingest). The baseline is
brainlab/sources/redact.py as it was at ``--baseline-commit``, loaded from git into its own
module. Prints, for each: seconds (min-max over repeats, the machine may be shared), MB/s,
strings changed; and the share of strings the prefilter lets through untouched.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
import types
from pathlib import Path

from benchkit import emit

BEST: dict[str, float] = {}  # best time of each redactor run, for the BENCH line


def strings_of(value, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            strings_of(item, out)
    elif isinstance(value, list):
        for item in value:
            strings_of(item, out)


def corpus_strings(root: Path) -> list[str]:
    found: list[str] = []
    for path in sorted(root.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                strings_of(json.loads(line), found)
            except ValueError:
                continue
    return found


def baseline_module(commit: str) -> types.ModuleType:
    """redact.py and its rule set (secret_rules.py) as they were at ``commit``, side by side
    with today's: the baseline's rules are its own, so a grammar change is measured too."""
    import sys

    def show(path: str) -> str:
        return subprocess.run(["git", "show", f"{commit}:{path}"], check=True,
                              capture_output=True, text=True).stdout

    rules = types.ModuleType("secret_rules_baseline")
    sys.modules[rules.__name__] = rules  # dataclasses look their module up
    exec(compile(show("brainlab/sources/secret_rules.py"), "secret_rules_baseline.py", "exec"),
         rules.__dict__)
    source = show("brainlab/sources/redact.py").replace("brainlab.sources.secret_rules",
                                                        rules.__name__)
    module = types.ModuleType("redact_baseline")
    exec(compile(source, "redact_baseline.py", "exec"), module.__dict__)
    return module


def run(name: str, redact, texts: list[str], repeat: int) -> list[str]:
    times, out = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        out = [redact(t) for t in texts]
        times.append(time.perf_counter() - start)
    mb = sum(len(t) for t in texts) / 1e6
    changed = sum(1 for a, b in zip(texts, out, strict=True) if a != b)
    BEST[name] = min(times)
    print(f"{name:<22} {min(times):6.2f}-{max(times):6.2f} s  {mb / min(times):6.1f} MB/s  "
          f"{changed:>6} strings changed")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    here = Path(__file__).resolve().parent.parent
    parser.add_argument("--corpus", type=Path, default=here.parent / "shared" / "corpora"
                        / "claude-code")
    parser.add_argument("--baseline-commit", default="aa8a31b")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        args.corpus = Path("/work/shared/corpora/claude-code")
    unique = list(dict.fromkeys(corpus_strings(args.corpus)))
    texts = unique + unique
    print(f"{len(unique)} distinct strings, {sum(map(len, unique)) / 1e6:.1f} MB, each twice")
    from brainlab.sources import redact as current
    from brainlab.sources.secret_rules import RULES, has_candidate

    old = baseline_module(args.baseline_commit)
    run(f"baseline {args.baseline_commit}", old.redact, texts, args.repeat)
    new = run("this tree", current.redact, texts, args.repeat)
    passed = sum(1 for t in unique if not has_candidate(t, t.lower()))
    print(f"prefilter: {passed}/{len(unique)} strings ({passed / len(unique):.0%}) pass with one "
          f"scan; {len(RULES)} rules")
    kinds: dict[str, int] = {}
    for text in new[: len(unique)]:
        for part in text.split("[REDACTED:")[1:]:
            kind = part.split("]", 1)[0]
            kinds[kind] = kinds.get(kind, 0) + 1
    print("marks by kind:", dict(sorted(kinds.items(), key=lambda kv: -kv[1])))
    emit("redact", strings=len(unique), rules=len(RULES), best_s=BEST,
         prefilter_pass=passed / len(unique), marks=kinds)


if __name__ == "__main__":
    main()
