"""`tune --write`'s file handling (brainlab.sim.tuning.apply): round trip and atomic replace.

The kill test: a child process rewrites a 320 kB commented brainlab.toml back and forth between
two versions through :func:`write_values`; it is killed (SIGKILL) at a random moment, several
times. Whenever it dies, the file is exactly the old version or the new one, never a mix.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import tomllib

import pytest

from brainlab.common.errors import ConfigError
from brainlab.sim.tuning import apply

BASE = """\
# settings, with comments that must survive
timezone = "Europe/Paris"  # mine

[thresholds]
conserve_close = 60.0  # SPEC default
coach_ratio = 0.4

[regulator]
# the loop cutter
max_relance_same_stop = 3  # SPEC
"""


def test_round_trip_keeps_everything_but_the_value():
    new = apply.updated_text(BASE, "thresholds", {"conserve_close": 45.0})
    assert new == BASE.replace("conserve_close = 60.0", "conserve_close = 45.0")
    regulator = apply.updated_text(BASE, "regulator", {"max_relance_same_stop": 2})
    assert regulator == BASE.replace("max_relance_same_stop = 3", "max_relance_same_stop = 2")


def test_missing_table_and_missing_file_are_added(tmp_path):
    added = apply.updated_text('timezone = "UTC"\n', "thresholds", {"conserve_close": 45.0})
    assert tomllib.loads(added) == {"timezone": "UTC", "thresholds": {"conserve_close": 45.0}}
    target = tmp_path / "new.toml"
    shown = apply.write_values(target, "thresholds", {"coach_ratio": 0.35})
    assert "+coach_ratio = 0.35" in shown
    assert tomllib.loads(target.read_text()) == {"thresholds": {"coach_ratio": 0.35}}


def test_dry_run_and_bad_files(tmp_path):
    target = tmp_path / "brainlab.toml"
    target.write_text(BASE)
    os.chmod(target, 0o640)
    shown = apply.write_values(target, "thresholds", {"conserve_close": 45.0}, dry_run=True)
    assert "-conserve_close = 60.0  # SPEC default" in shown
    assert "+conserve_close = 45.0  # SPEC default" in shown
    assert target.read_text() == BASE
    apply.write_values(target, "thresholds", {"conserve_close": 45.0})
    assert oct(target.stat().st_mode & 0o777) == oct(0o640)  # the file's mode is kept
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    broken = tmp_path / "broken.toml"
    broken.write_text("[thresholds\nx = 1\n")
    with pytest.raises(ConfigError, match="broken.toml: not a readable TOML file"):
        apply.write_values(broken, "thresholds", {"coach_ratio": 0.3})
    with pytest.raises(ConfigError, match="a folder"):
        apply.write_values(tmp_path, "thresholds", {"coach_ratio": 0.3})


CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from brainlab.sim.tuning import apply
    path = Path(sys.argv[1])
    value = 45.0
    while True:
        apply.write_values(path, "thresholds", {"conserve_close": value})
        print("wrote", flush=True)
        value = 60.0 if value == 45.0 else 45.0
""")


def test_a_kill_during_the_write_leaves_the_old_or_the_new_file(tmp_path):
    target = tmp_path / "brainlab.toml"
    padding = "".join(f"# {'x' * 76}\n" for _ in range(4_000))  # ~320 kB of comments
    old = padding + BASE
    new = apply.updated_text(old, "thresholds", {"conserve_close": 45.0})
    target.write_text(old)
    rng = random.Random(42)
    for _ in range(4):
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(target)],
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline() == "wrote\n"  # writing in a loop from here on
        for _ in range(rng.randint(0, 3)):
            child.stdout.readline()
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stdout.close()
        assert target.read_text() in (old, new)
