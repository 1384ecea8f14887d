"""No traceback reaches a user, even from a bug no command foresaw (README: one `Error:` line).

``brainlab.cli.run`` (the console script) turns an exception that escaped every command's
own handling into one line naming its type, exit code 70 (EX_SOFTWARE); BRAINLAB_DEBUG=1
shows the traceback for the bug report. The failing command is registered in a subprocess,
the way the console script runs, so the real entry point is what is checked.
"""

import os
import subprocess
import sys

SCRIPT = """
import sys
import click
from brainlab import cli

@cli.main.command("explode")
def explode():
    raise RuntimeError("a bug\\nsecond line")

sys.argv = ["brainlab", "explode"]
cli.run()
"""


def run_script(debug: bool):
    env = {k: v for k, v in os.environ.items() if k != "BRAINLAB_DEBUG"}
    env["PYTHONPATH"] = ":".join(sys.path)
    if debug:
        env["BRAINLAB_DEBUG"] = "1"
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=120)


def test_an_unforeseen_exception_is_one_error_line():
    done = run_script(debug=False)
    assert done.returncode == 70
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: unexpected RuntimeError: a bug.")
    assert "BRAINLAB_DEBUG=1" in lines[0]


def test_brainlab_debug_shows_the_traceback():
    done = run_script(debug=True)
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "RuntimeError: a bug" in done.stderr
