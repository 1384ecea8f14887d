"""The command tree loads a command's module when the command is asked for (stop 26).

``brainlab.cli.commands.COMMANDS`` names, for each top-level command, the module that registers
it; ``main`` imports only that module. A name missing there, or pointing at the wrong module,
would make that command unknown in a fresh process while ``--help`` (which loads every
module) still lists it: these tests keep the table and the tree the same.
"""

from __future__ import annotations

import json
import subprocess
import sys

from brainlab.cli import commands


def test_every_registered_command_is_in_the_table_with_its_module():
    commands.load(None)
    registered = {name: command.callback.__module__.rsplit(".", 1)[-1]
                  for name, command in commands.main.commands.items()}
    assert registered == commands.COMMANDS


PROBE = """
import json, sys
from brainlab.cli import commands
from click.testing import CliRunner
out = {}
for name in sorted(commands.COMMANDS):
    done = CliRunner().invoke(commands.main, [name, "--help"])
    out[name] = [done.exit_code, sorted(m for m in sys.modules if m.startswith("brainlab.cli."))]
print(json.dumps(out))
"""


def test_each_command_answers_in_a_fresh_process_loading_its_module_first():
    """Each name's --help works in a process where nothing loaded it before it was asked for
    (the names in sorted order: a later one may find its module loaded, an earlier never)."""
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert {name: code for name, (code, _mods) in seen.items()} == dict.fromkeys(seen, 0)
    first = sorted(commands.COMMANDS)[0]
    loaded = set(seen[first][1])
    assert f"brainlab.cli.{commands.COMMANDS[first]}" in loaded
    assert "brainlab.cli.usage" not in loaded, "the first command loaded every module"
