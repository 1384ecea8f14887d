"""notebooks/03_regulator_rules.ipynb runs with papermill on a DB built from synthetic journals."""

import random
from datetime import datetime
from pathlib import Path

import nbformat
import papermill as pm
import pytest

from brainlab.sources.circuits import CircuitsSource
from brainlab.store import open_writer
from brainlab.store.ingest import run
from brainlab.synth.circuits import write_circuits

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "03_regulator_rules.ipynb"


def test_notebook_is_stored_clean_with_parameters():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1 and "db_path" in tagged[0].source and "seed" in tagged[0].source


@pytest.mark.slow
def test_notebook_executes(tmp_path):
    write_circuits(tmp_path, random.Random(3), datetime(2026, 1, 5), datetime(2026, 2, 16), 150)
    db = tmp_path / "db.duckdb"
    con = open_writer(db)
    run(con, [CircuitsSource()], tmp_path)
    con.close()
    out = tmp_path / "out.ipynb"
    pm.execute_notebook(str(NOTEBOOK), str(out), parameters={"db_path": str(db), "seed": 1,
                                                              "draws": 30},
                        kernel_name="python3", cwd=str(NOTEBOOK.parents[1]))
    executed = nbformat.read(out, as_version=4)
    text = "".join(o.get("text", "") for c in executed.cells for o in c.get("outputs", []))
    assert "max_relance_same_stop=2" in text
    charts = [o for c in executed.cells for o in c.get("outputs", [])
              if any("vegalite" in k for k in o.get("data", {}))
              or "vega" in o.get("data", {}).get("text/html", "")]
    assert len(charts) >= 3
