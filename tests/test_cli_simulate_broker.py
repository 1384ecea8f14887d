"""brainlab ingest sprints / simulate broker, end to end on the synthetic sprints."""

import random

import pandas as pd
from click.testing import CliRunner

from brainlab.cli import main
from brainlab.synth.sprints import PLANTED_DOMAIN, write_sprints


def test_ingest_and_simulate(tmp_path):
    brain, db = tmp_path / "brain", tmp_path / "b.duckdb"
    write_sprints(brain, [], random.Random(7))
    runner = CliRunner()
    result = runner.invoke(main, ["ingest", "sprints", str(brain), "--db", str(db)])
    assert result.exit_code == 0, result.output
    out_csv = tmp_path / "rows.csv"
    result = runner.invoke(main, ["simulate", "broker", "--db", str(db), "--policy", "protocol",
                                  "--policy", "history:k=3", "--out", str(out_csv),
                                  "--contracts", "all"])
    assert result.exit_code == 0, result.output
    assert "protocol" in result.output and "history:k=3" in result.output
    assert "inferred" in result.output  # side-tool has no contract
    rows = pd.read_csv(out_csv)
    for column in ("sprint_id", "agent", "policy", "loaded", "hits", "misses", "waste",
                   "tokens_loaded", "tokens_miss", "context_load", "stale_ratio",
                   "breath_depth", "exhale_rate", "alert_accumulation"):
        assert column in rows.columns
    assert set(rows.policy) == {"protocol", "history:k=3", "recorded"}  # the baseline added
    out_parquet = tmp_path / "rows.parquet"
    result = runner.invoke(main, ["simulate", "broker", "--db", str(db), "--out",
                                  str(out_parquet), "--project", "originsdigital"])
    assert result.exit_code == 0, result.output
    frame = pd.read_parquet(out_parquet)
    assert set(frame.project) == {"originsdigital"} and PLANTED_DOMAIN in set(frame.domain)


def test_simulate_errors(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["simulate", "broker", "--db", str(tmp_path / "none.duckdb")])
    assert result.exit_code == 1 and result.output.startswith("Error: no database")
    brain, db = tmp_path / "brain", tmp_path / "b.duckdb"
    write_sprints(brain, [], random.Random(1))
    runner.invoke(main, ["ingest", "sprints", str(brain / "progression" / "sprints" /
                                                  "sprints.jsonl"), "--db", str(db)])
    result = runner.invoke(main, ["simulate", "broker", "--db", str(db), "--policy", "magic",
                                  "--contracts", "inferred"])
    assert result.exit_code == 1 and "unknown policy 'magic'" in result.output
    result = runner.invoke(main, ["simulate", "broker", "--db", str(db), "--out", "x.txt",
                                  "--contracts", "inferred"])
    assert result.exit_code == 1 and ".csv or .parquet" in result.output


def test_the_rows_file_lists_sprints_in_their_recorded_order(demo, tmp_path):
    """``--out`` lists, within each policy, the recorded sprints in file order
    (``sprint_agent_inputs.seq``), then the transcripts' sprints by start. Before, the inputs
    were read unordered and DuckDB's parallel scan gave each run its own row order (two runs,
    two files; the settings matrix compared them as text and passed by that luck)."""
    from brainlab.store import query

    out_csv = tmp_path / "rows.csv"
    done = CliRunner().invoke(main, ["simulate", "broker", "--db", str(demo["db"]), "--policy",
                                     "protocol", "--out", str(out_csv)])
    assert done.exit_code == 0, done.output
    rows = pd.read_csv(out_csv)
    recorded = query(demo["db"], "SELECT sprint_id, agent FROM sprint_agent_inputs ORDER BY seq")
    order = {key: n for n, key in enumerate(zip(recorded.sprint_id, recorded.agent, strict=True))}
    starts = query(demo["db"], "SELECT session_id, min(ts) AS start FROM cc_requests"
                               " WHERE project IS NOT NULL GROUP BY session_id")
    start = dict(zip(starts.session_id, starts.start, strict=True))
    firsts = query(demo["db"], "SELECT session_id, coalesce(subagent_type, CASE WHEN agent_id"
                               " IS NULL THEN 'main' ELSE 'agent-' || agent_id END) AS agent,"
                               " min(ts) AS first FROM cc_tool_calls GROUP BY ALL")
    first = {(s, a): (t, a) for s, a, t in zip(firsts.session_id, firsts.agent, firsts.first,
                                                        strict=True)}
    for _policy, part in rows.groupby("policy", sort=False):
        keys = list(zip(part.sprint_id, part.agent, strict=True))
        seen = [order[key] for key in keys if key in order]
        assert len(seen) > 50 and seen == sorted(seen)
        sessions = [s for s, _agent in keys if s in start]
        sessions = [s for n, s in enumerate(sessions) if n == 0 or sessions[n - 1] != s]
        assert len(sessions) >= 5 and sessions == sorted(sessions, key=lambda s: (start[s], s))
        for session in sessions:  # its agents by their first call
            agents = [a for s, a in keys if s == session]
            assert agents == sorted(agents, key=lambda a, s=session: first[(s, a)])
