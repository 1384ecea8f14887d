"""The report page's body from an executed notebook: nbconvert's exporter against html.notebook_body.

``report weekly`` turns the executed notebook into the page in its own process. Each run here
is a fresh interpreter (the command's situation: nothing imported yet) that reads the notebook,
then either builds the body as the command did before stop 26 (nbconvert's ``HTMLExporter``,
'basic' template, made and its template compiled once, as ``html._exporter`` does) or as it
does now (``html.notebook_body``: the template's text written here, then bs4). The CPU-s
counted start after reading the notebook: the import of what writes the body, and the body.
Runs alternate (``nbconvert``, ``plain``, ...); the bodies of both must be equal, byte for byte.

    PYTHONPATH=. python benchmarks/bench_report_html.py reports/2026-W48/weekly_health.ipynb
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
from pathlib import Path

from benchkit import emit, load_average

CHILD = r"""
import hashlib, json, resource, sys
import nbformat
from brainlab.report import html
nb = nbformat.read(sys.argv[2], as_version=4)
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
start = cpu()
if sys.argv[1] == "nbconvert":
    body, _ = html._exporter().from_notebook_node(html._report_only(nb))
else:
    body = html.notebook_body(nb)
print(json.dumps({"cpu": cpu() - start, "sha": hashlib.sha256(body.encode()).hexdigest()}))
"""


def run(mode: str, notebook: Path) -> dict:
    """One fresh interpreter building the body one way: its CPU-s and the body's hash."""
    done = subprocess.run([sys.executable, "-c", CHILD, mode, str(notebook)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path, help="an executed weekly_health.ipynb")
    parser.add_argument("--repeat", type=int, default=7, help="runs per way (alternating)")
    args = parser.parse_args()
    found: dict[str, list[float]] = {"nbconvert": [], "plain": []}
    hashes = set()
    print(f"start (load average {' '.join(map(str, load_average()))})")
    for _ in range(args.repeat):
        for mode in found:
            one = run(mode, args.notebook)
            found[mode].append(one["cpu"])
            hashes.add(one["sha"])
    if len(hashes) != 1:
        sys.exit("the two bodies differ: html._plain_body does not write nbconvert's text")
    digest = hashlib.sha256(args.notebook.read_bytes()).hexdigest()[:12]
    for mode, values in found.items():
        print(f"{mode:10s} median {statistics.median(values):.3f} CPU-s "
              f"({min(values):.3f}-{max(values):.3f}, {len(values)} runs)")
    saved = statistics.median(found["nbconvert"]) - statistics.median(found["plain"])
    print(f"the same body both ways; saved {saved:.3f} CPU-s a command "
          f"(load average {' '.join(map(str, load_average()))})")
    emit("report_html", notebook=digest, nbconvert=statistics.median(found["nbconvert"]),
         plain=statistics.median(found["plain"]), saved=saved)


if __name__ == "__main__":
    main()
