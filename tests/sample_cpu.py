"""Run a command; print the CPU-s of every process it started, by kind, orphans included.

``python tests/sample_cpu.py CMD...``: every 0.5 s, each process that carries this run's
``SAMPLE_MARK`` variable or descends from one that did (chromium's renderers do not carry it)
is read; python processes are split by what they run (pytest, JupyterLab's server, kernels,
the brainlab CLI). A process that lives less than 0.5 s may be missed. Used to measure the
lab group (docs/testing.md, issue 28 item 1).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

KINDS = (("jupyterlab", "py:lab-server"), ("ipykernel", "py:kernel"), ("pytest", "py:pytest"),
         ("bin/brainlab", "py:brainlab-cli"))


def kind(process: psutil.Process) -> str:
    """The process's name, for python what it runs."""
    name = process.name()
    if not name.startswith("python"):
        return name
    command = " ".join(process.cmdline())
    return next((label for key, label in KINDS if key in command),
                "py:" + " ".join(command.split())[:60])


def main(command: list[str]) -> int:
    """Run ``command``, sample its processes, print the sums; return its exit code."""
    mark = f"{os.getpid()}-{time.time()}"
    proc = subprocess.Popen(command, env={**os.environ, "SAMPLE_MARK": mark})
    ours, seen = {os.getpid()}, {}

    def scan() -> int:
        alive = 0
        for process in psutil.process_iter():
            try:
                if (process.environ().get("SAMPLE_MARK") != mark
                        and not {p.pid for p in process.parents()} & ours):
                    continue
                ours.add(process.pid)
                times = process.cpu_times()
                seen[(process.pid, process.create_time())] = (kind(process),
                                                              times.user + times.system)
                alive += 1
            except psutil.Error:
                pass
        return alive

    start = time.monotonic()
    while proc.poll() is None:
        scan()
        time.sleep(0.5)
    wall = time.monotonic() - start
    for _ in range(50):  # orphans (JVMs, kernels) still running after the command
        if not scan():
            break
        time.sleep(0.5)
    total: dict[str, float] = {}
    count: dict[str, int] = {}
    for name, cpu in seen.values():
        total[name] = total.get(name, 0.0) + cpu
        count[name] = count.get(name, 0) + 1
    parts = " ".join(f"{k}={v:.1f}({count[k]})"
                     for k, v in sorted(total.items(), key=lambda kv: -kv[1]))
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"rc {proc.returncode} wall {wall:.1f} s, CPU-s {sum(total.values()):.1f}: {parts}"
          f" | load {load}")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
