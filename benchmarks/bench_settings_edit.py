"""Benchmark: `hooks install` on settings files from a real-sized one to the 1 MiB cap.

``hooks install`` parses the user's settings file keeping every value's text (issue 46 item
6). It takes spans only where it edits (the top, ``hooks``, its events and groups) and reads
every other value whole with Python's C reader. Figures, in the same run: ``json.loads`` of
the text (the floor any reader pays), the parse with spans everywhere (the baseline: the
first version of the editor), the parse as install does it, and a whole ``plan()`` of an
install (read, remove brainlab's entries, add them, check the result), on three files: a
3 kB settings file, 1 MiB of ``permissions.allow`` rules, and 1 MiB of numbers.

Run: PYTHONPATH=$PWD python benchmarks/bench_settings_edit.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from benchkit import emit, load_average

from brainlab.common import jsonedit
from brainlab.live import settings


def samples() -> dict[str, str]:
    """Three settings texts: a real-sized one, and two at the 1 MiB cap."""
    small = {"model": "opus", "permissions": {"allow": [f"Bash(npm run task{i}:*)"
                                                        for i in range(60)]},
             "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
                       "PreToolUse": [{"matcher": "Bash", "hooks": [
                           {"type": "command", "command": "~/bin/guard.sh", "timeout": 5}]}]},
             "env": {f"VAR_{i}": str(i) for i in range(20)}}
    rules = dict(small, permissions={"allow": [f"Bash(tool-{i} --flag:*)" for i in range(27000)]})
    numbers = dict(small, n=list(range(140000)))
    return {"3 kB": json.dumps(small, indent=2), "1 MiB rules": json.dumps(rules, indent=2),
            "1 MiB numbers": json.dumps(numbers)}


def best(func, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench_settings_"))
    print(f"load average {load_average()}; best of {args.repeat}, seconds")
    print(f"{'file':<14} {'bytes':>8} {'json.loads':>11} {'spans everywhere':>17}"
          f" {'install parse':>14} {'install plan':>13}")
    figures = {}
    for name, text in samples().items():
        path = folder / "settings.json"
        path.write_text(text)
        floor = best(lambda t=text: json.loads(t), args.repeat)
        everywhere = best(lambda t=text: jsonedit.parse(t), args.repeat)
        ours = best(lambda t=text: jsonedit.parse(t, settings._structural), args.repeat)
        plan = best(lambda p=path: settings.plan(p, True, folder / "s.duckdb", "/opt/brainlab"),
                    args.repeat)
        print(f"{name:<14} {len(text):>8} {floor:>11.3f} {everywhere:>17.3f} {ours:>14.3f}"
              f" {plan:>13.3f}")
        figures[name] = {"bytes": len(text), "json_loads_s": floor,
                         "spans_everywhere_s": everywhere, "install_parse_s": ours,
                         "install_plan_s": plan}
    emit("settings_edit", **figures)


if __name__ == "__main__":
    main()
