"""Each spec value once (issue 40 item 3): SQL defaults, scored categories, retention, commits.

A macro's threshold default is ``{{ thresholds.<field> }}`` in its model file and the value of
brainlab/spec/thresholds.py in the store; the scored categories and the workspace retention
days are lookup tables written from brainlab/spec/vocabulary.py; the ingest and the status
line count a session's git commits by one rule (brainlab/spec/commits.py, SPEC §3.2 inputs).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict

import pytest
import yaml
from claude_factory import assistant, tool_use, usage, write

from brainlab.live import statusline
from brainlab.spec import vocabulary
from brainlab.spec.commits import is_git_commit
from brainlab.spec.thresholds import SIGNAL_PARAMETERS, Thresholds
from brainlab.store import graph, open_writer, query, spec_sql
from brainlab.transcripts.ingest import ingest_claude

HEADER = re.compile(r"CREATE\s+OR\s+REPLACE\s+MACRO\s+(\w+)\s*\((.*?)\)\s*AS\s+TABLE", re.S | re.I)
DEFAULT = re.compile(r"(\w+)\s*:=\s*('(?:[^']|'')*'|\{\{[^}]*\}\}|\[[^\]]*\]|[-\w.]+)")
# numeric macro defaults that are not SPEC values, each with its reason (anything else fails)
NOT_SPEC = {
    ("session_audit_for", "tokens_rel"): "tolerance of the logged-vs-measured audit (issue 13)",
    ("session_audit_for", "tokens_abs"): "(same)",
    ("session_audit_for", "pct_points"): "(same)",
    ("session_audit_for", "duration_rel"): "(same)",
    ("session_audit_for", "duration_abs"): "(same)",
    ("session_audit_for", "health_rel"): "(same)",
    ("session_audit_for", "health_abs"): "(same)",
    ("session_matches_for", "tolerance_min"): "brainlab's log-to-transcript matching window",
    ("rule_bot003_for", "tolerance_pct"): "a compliance rule's own tolerance",
}


def macro_defaults(text: str) -> dict[str, dict[str, str]]:
    """``{macro: {parameter: default text}}`` of every table macro header in ``text``."""
    body = re.sub(r"--[^\n]*", "", text)
    return {m.group(1): dict(DEFAULT.findall(m.group(2))) for m in HEADER.finditer(body)}


def raw_models() -> dict[str, tuple[str, dict]]:
    """Each model's file text as written (value placeholders kept, parameter lists written
    out) and its yml."""
    out = {}
    for model in graph.model_files():
        yml = model.path.with_suffix(".yml")
        out[model.name] = (spec_sql.expand(model.path.read_text(encoding="utf-8")),
                           yaml.safe_load(yml.read_text(encoding="utf-8")) if yml.exists() else {})
    return out


def test_every_sql_default_is_the_spec_value():
    """The SQL the store runs, macro by macro: each bound default equals spec/thresholds.py."""
    spec = asdict(Thresholds())
    rendered = {m.name: m.sql for m in graph.model_files()}
    bound_seen = 0
    for name, (text, yml) in raw_models().items():
        written = macro_defaults(text).get(name, {})
        executed = macro_defaults(rendered[name]).get(name, {})
        for param, default in written.items():
            placeholder = spec_sql.PLACEHOLDER.fullmatch(default)
            if placeholder:
                space, field = placeholder.groups()
                assert space == "thresholds" and field in spec, (name, param, default)
                assert executed[param] == spec_sql.literal(spec[field]), (name, param)
                bound_seen += 1
            elif re.fullmatch(r"-?\d+(\.\d+)?", default):  # a number: must not be a spec one
                assert (name, param) in NOT_SPEC, (
                    f"{name}.{param} := {default}: a number in SQL; name the spec value"
                    " ({{ thresholds.<field> }}) or list it in NOT_SPEC with its reason")
        # the yml documents the same default text (docs/schema.md renders it)
        documented = {p["name"]: str(p["default"]) for p in yml.get("parameters", [])
                      if "default" in p}
        for param, default in documented.items():
            assert written.get(param) == default, (name, param, default, written.get(param))
    assert bound_seen >= 40  # 2 x 14 signal parameters, ratio, peaks, agent cost, cold start


def test_the_signal_macros_take_every_threshold_they_use_by_one_list():
    written = macro_defaults(raw_models()["session_signals_for"][0])["session_signals_for"]
    bound = {p: d for p, d in written.items() if "{{" in d}
    assert [(p, d.strip("{} ").split(".")[1]) for p, d in bound.items()] == list(
        SIGNAL_PARAMETERS)
    names, values = Thresholds(coach_ratio=0.3).signal_arguments()
    assert names.split(", ")[5] == "coach_ratio := ?" and values[5] == 0.3


def test_a_changed_spec_value_reaches_the_store_macros(tmp_path, monkeypatch):
    """Planted: the store's default follows spec/ (coach_ratio 0.3 fires the coach more)."""
    fixed = {m.name: m.sql for m in graph.model_files()}["session_signals_for"]
    monkeypatch.setattr(spec_sql, "namespaces",
                        lambda: {"thresholds": Thresholds(coach_ratio=0.3),
                                 "vocabulary": vocabulary})
    changed = {m.name: m.sql for m in graph.model_files()}["session_signals_for"]
    assert "coach_ratio := 0.4," in fixed and "coach_ratio := 0.3," in changed
    with pytest.raises(ValueError, match=r"unknown spec value \{\{ thresholds.nope \}\}"):
        spec_sql.render("x := {{ thresholds.nope }}", "m.sql")


def test_the_default_views_equal_the_macros_under_the_spec_set(demo):
    """Null: the views (macro defaults) and the macros given spec/'s values agree row for row;
    and a different set changes the answer, so the comparison can fail."""
    db = demo["db"]
    names, values = Thresholds().signal_arguments()
    order = " ORDER BY sess_id"
    view = query(db, "SELECT * FROM session_signals" + order)
    given = query(db, f"SELECT * FROM session_signals_for({names})" + order, values)
    assert len(view) > 50 and view.equals(given)
    names, values = Thresholds(coach_ratio=0.3).signal_arguments()
    other = query(db, f"SELECT * FROM session_signals_for({names})" + order, values)
    assert other.coach_triggered.sum() < view.coach_triggered.sum()


def test_scored_categories_and_retention_days_are_lookups_from_spec(demo):
    texts = "\n".join(text for text, _ in raw_models().values())
    assert "'use-brain', 'build-brain', 'explore-brain'" not in texts
    assert not re.search(r"WHEN\s+'(30|90)d'\s+THEN", texts)
    db = demo["db"]
    assert sorted(query(db, "SELECT category FROM scored_categories").category) == sorted(
        vocabulary.SCORED_CATEGORIES)
    assert dict(query(db, "SELECT * FROM workspace_retention").itertuples(index=False)) == (
        vocabulary.WORKSPACE_RETENTION_DAYS)


COMMANDS = [  # (tool, command, a commit?) SPEC §3.2 commits, as spec/commits.py reads them
    ("Bash", "git commit -m 'one'", True),
    ("Bash", "git add -A && git commit -am 'two'", True),
    ("Bash", "git -C /work/x commit -m 'three'", True),
    ("Bash", "git -c user.name=a commit --amend --no-edit", True),
    ("Bash", "git status && grep -rn commit .", False),
    ("Bash", "git show --stat HEAD", False),
    ("Bash", "git log --grep commit", False),
    ("Task", "git commit -m 'not a shell'", False),
]


def test_the_ingest_and_the_status_line_count_commits_by_one_rule(tmp_path):
    sid = "sess-commits-1"
    lines = [{"type": "user", "sessionId": sid, "timestamp": "2026-04-01T10:00:00.000Z",
              "isSidechain": False, "uuid": "u0", "cwd": "/p",
              "message": {"role": "user", "content": "brain work +sprint"}}]
    for i, (tool, command, _) in enumerate(COMMANDS):
        line = assistant(sid, f"2026-04-01T10:0{i}:30.000Z", f"c{i}", f"rc{i}",
                         usage(1, 1, 0, 10), content=[tool_use(f"t{i}", tool, command=command)])
        line["isSidechain"] = i == 1  # a subagent's commit counts too, as the ingest's
        lines.append(line)
    path = write(tmp_path / "projects" / "-p" / f"{sid}.jsonl", lines)
    expected = sum(commit for *_, commit in COMMANDS)
    assert [is_git_commit(t, c) for t, c, _ in COMMANDS] == [c for *_, c in COMMANDS]

    state: dict = {}
    statusline.scan(state, path.read_bytes())
    con = open_writer(tmp_path / "s.duckdb")
    try:
        ingest_claude(con, tmp_path / "projects", workers=1)
        (stored,) = con.execute("SELECT commits FROM cc_sessions WHERE session_id = ?",
                                [sid]).fetchone()
    finally:
        con.close()
    assert state["commits"] == stored == expected == 4
    assert json.dumps(state)  # the state stays JSON (the status line saves it)


def test_the_ttl_defaults_reach_sql_from_spec(monkeypatch):
    """SPEC §2.6 claim TTL (4 h) and §5 workspace TTL (7 d): named in the models, never written;
    a changed spec value changes the SQL the store runs (planted)."""
    texts = {name: text for name, (text, _) in raw_models().items()}
    assert "{{ vocabulary.CLAIM_TTL_DEFAULT_HOURS }}" in texts["claim_status_at"]
    assert "{{ vocabulary.WORKSPACE_TTL_DEFAULT_DAYS }}" in texts["workspace_lifecycle"]
    assert not re.search(r"ttl_hours,\s*4(\.0)?\)", texts["claim_status_at"])
    monkeypatch.setattr(vocabulary, "CLAIM_TTL_DEFAULT_HOURS", 6.5)
    monkeypatch.setattr(vocabulary, "WORKSPACE_TTL_DEFAULT_DAYS", 11)
    rendered = {m.name: m.sql for m in graph.model_files()}
    assert "6.5" in rendered["claim_status_at"] and "{{" not in rendered["claim_status_at"]
    assert rendered["workspace_lifecycle"].count("11)") == 2


def test_a_parameter_list_is_written_out_once_for_each_signal_macro():
    """The three signal macros take SIGNAL_PARAMETERS through one placeholder; an unknown list
    is an error naming the file."""
    for name in ("session_signals_for", "weekly_health_for", "trend_observations_for"):
        path = next(m.path for m in graph.model_files() if m.name == name)
        assert "{{ parameters.signals }}" in path.read_text(encoding="utf-8")
        written = macro_defaults(raw_models()[name][0])[name]
        assert [p for p in written if "{{" in written[p]][:len(SIGNAL_PARAMETERS)] == [
            p for p, _ in SIGNAL_PARAMETERS]
    with pytest.raises(ValueError, match=r"m\.sql: unknown parameter list"):
        spec_sql.render("f({{ parameters.nope }})", "m.sql")
