"""A notebook's printed text reaches an nbclient run as whole lines (brainlab.lab.output).

The flake it pins (issue 44 item 3, CI of stop 23): under load ipykernel sent a print's text
and its newline in two stream messages; nbclient keeps them as two outputs and stock
``nbconvert --to html`` drew the lone newline as an empty output area. The cells below force
the split (a pause longer than the stream's 0.2 s send interval between a line's text and its
newline): the control cell shows the lone newline, and after ``notebook_db()`` (every
notebook's first call) the same cell gives one whole line, with a display's place kept.
"""

from __future__ import annotations

import contextlib
import os

import nbformat
from nbclient import NotebookClient

from brainlab.lab import kernels

SPLIT = ("import sys, time\n"
         "sys.stdout.write('text')\n"
         "time.sleep(0.6)\n"
         "sys.stdout.write('\\n')\n"
         "print('before', end='')\n"
         "from IPython.display import display\n"
         "display({'text/plain': 'shown'}, raw=True)\n"
         "print('after')\n")


def _streams(outputs: list) -> list:
    return [(o["output_type"], o.get("text") or o.get("data", {}).get("text/plain"))
            for o in outputs]


def test_printed_lines_are_whole_after_the_notebooks_first_call(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SPLIT),
                nbformat.v4.new_code_cell("from brainlab.lab import notebook_db\n"
                                          "db_path = notebook_db()"),
                nbformat.v4.new_code_cell(SPLIT),
                nbformat.v4.new_code_cell("import sys\nprint('to stderr', file=sys.stderr)\n"
                                          "print(type(sys.stdout).__name__)")]
    with contextlib.ExitStack() as stack:
        km = kernels.start_kernel(stack, cwd=str(tmp_path), env={**os.environ})
        NotebookClient(nb, km=km, timeout=120).execute()
    before, after = (_streams(nb.cells[i].outputs) for i in (0, 2))
    assert before[0] == ("stream", "text")  # a line split in two without the fix: can fail
    assert after == [("stream", "text\nbefore"), ("display_data", "shown"),
                     ("stream", "after\n")]
    assert sorted(_streams(nb.cells[3].outputs)) == [("stream", "WholeLines\n"),
                                                    ("stream", "to stderr\n")]
