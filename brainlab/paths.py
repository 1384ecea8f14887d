"""Default places of the database, the demo brain and the reports (relative to the cwd).

Apart from :mod:`brainlab.config` (which re-exports them) so the command line and the store's
connection factory name them without building the threshold dataclasses (issue 12: read
commands start fast).
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_DB = Path("data/brainlab.duckdb")
DEMO_DIR = Path("data/demo")
DEFAULT_REPORTS = Path("reports")
