"""notebooks/02_context_broker_policies.ipynb executes with papermill on synthetic sprints."""

import json
import random
from pathlib import Path

import papermill
import pytest

from brainlab.sources.sprints import sprint_sources
from brainlab.store import ingest, open_writer
from brainlab.synth.sprints import write_sprints

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "02_context_broker_policies.ipynb"


def test_notebook_is_stored_clean():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    assert "parameters" in code[0]["metadata"].get("tags", [])
    assert "db_path" in "".join(code[0]["source"])


@pytest.mark.slow
def test_notebook_executes(tmp_path):
    brain, db = tmp_path / "brain", tmp_path / "b.duckdb"
    write_sprints(brain, [], random.Random(7))
    con = open_writer(db)
    ingest.run(con, sprint_sources(), brain)
    con.close()
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(str(NOTEBOOK), str(out), parameters={"db_path": str(db)},
                               kernel_name="python3", cwd=str(NOTEBOOK.parents[1]))
    executed = json.loads(out.read_text(encoding="utf-8"))
    outputs = [o for c in executed["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    rendered = [str(o.get("data", {})) for o in outputs]
    assert sum("vega" in text for text in rendered) >= 3  # frontier, breath, most missed
