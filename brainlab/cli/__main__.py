"""``python -m brainlab.cli``: the console script."""

from brainlab.cli import run

run()
