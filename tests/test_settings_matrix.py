"""Every consumer against every source of each setting (issue 40 item 1, SPEC §3.3/§4.4/§6.5).

One precedence, resolved once per process (brainlab/settings.py): command option >
environment > ``--config FILE`` / ``$BRAINLAB_CONFIG`` > ``./brainlab.toml`` found from the
user's folder > SPEC defaults. Each consumer runs once per source with every setting it reads
planted through that source alone (timezone, start of week, db, thresholds, regulator rules,
prices), and must show each planted value; with no source it shows the SPEC defaults (null).
The commands run in-process (click's runner, the folder and environment a shell would give);
the hook and the status line through their library entry points, as the console script calls
them; kernels through the ``papermill`` command.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import asdict, fields
from datetime import date
from pathlib import Path

import nbformat
import pytest
from claude_factory import assistant, usage, write
from click.testing import CliRunner

from brainlab import settings as settings_module
from brainlab.cli import main
from brainlab.common.errors import ConfigError
from brainlab.common.paths import SETTINGS_ENVS
from brainlab.lab import read_records
from brainlab.live import cache, hook_ingest, statusline
from brainlab.metrics.report import week_figures
from brainlab.settings import Settings, resolve
from brainlab.spec.regulator import RegulatorRules
from brainlab.spec.thresholds import Thresholds
from brainlab.spec.weeks import Week
from brainlab.store import query

ROOT = Path(__file__).resolve().parents[1]
PAPERMILL = Path(sys.executable).with_name("papermill")
ZONE = "Pacific/Kiritimati"  # UTC+14: most calls move to the next day
THRESHOLDS = {"coach_ratio": 0.3, "coach_health": 1000.0, "coach_last_n": 1,
              "saturation_peak_use": 50.0, "stale_ratio_max": 0.01, "context_load_max": 1.0}
RULES = {"max_reviews": 1, "max_relance_same_stop": 1}
MODEL = "claude-opus-4-5-20251101"
PRICES = (f'[models."{MODEL}"]\ninput = 1000.0\noutput = 1000.0\ncache_write_5m = 1000.0\n'
          "cache_read = 1000.0\n")
SOURCES = ("brainlab.toml", "--config", "$BRAINLAB_CONFIG", "environment")


def toml_text(db: str, prices: str) -> str:
    return (f'timezone = "{ZONE}"\nstart_of_week = "sunday"\n[paths]\ndb = "{db}"\n'
            f'prices = "{prices}"\n[thresholds]\n'
            + "".join(f"{k} = {v}\n" for k, v in THRESHOLDS.items())
            + "[regulator]\n" + "".join(f"{k} = {v}\n" for k, v in RULES.items()))


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """A project folder (where settings are planted) and another folder; a clean environment."""
    for name in SETTINGS_ENVS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("BRAINLAB_CACHE_DIR", str(tmp_path / "cache"))
    project, other = tmp_path / "project", tmp_path / "other"
    (project / "stores").mkdir(parents=True)
    other.mkdir()
    (project / "prices.toml").write_text(PRICES, encoding="utf-8")
    return project, other


def plant(source: str, project: Path, other: Path, db: Path, monkeypatch) -> list[str]:
    """Put every setting in ``source`` alone; chdir where a user would type; return CLI args."""
    text = toml_text(os.path.relpath(db, project), "prices.toml")
    if source == "brainlab.toml":
        (project / "brainlab.toml").write_text(text, encoding="utf-8")
        where, args = project, []
    elif source in ("--config", "$BRAINLAB_CONFIG"):
        (project / "team.toml").write_text(text, encoding="utf-8")
        where = other  # the file's paths are read from its own folder
        args = ["--config", str(project / "team.toml")] if source == "--config" else []
        if source == "$BRAINLAB_CONFIG":
            monkeypatch.setenv("BRAINLAB_CONFIG", str(project / "team.toml"))
    else:
        where, args = project, []
        monkeypatch.setenv("BRAINLAB_DB", os.path.relpath(db, project))  # from the user's folder
        monkeypatch.setenv("BRAINLAB_PRICES", "prices.toml")
        monkeypatch.setenv("BRAINLAB_TIMEZONE", ZONE)
        monkeypatch.setenv("BRAINLAB_START_OF_WEEK", "sunday")
        monkeypatch.setenv("BRAINLAB_THRESHOLDS", ",".join(f"{k}={v}" for k, v in THRESHOLDS.items()))
        monkeypatch.setenv("BRAINLAB_REGULATOR", ",".join(f"{k}={v}" for k, v in RULES.items()))
    monkeypatch.chdir(where)
    monkeypatch.setenv("PWD", str(where))
    return args


def planted_settings() -> tuple[Thresholds, RegulatorRules]:
    return Thresholds().replace(**THRESHOLDS), RegulatorRules().replace(**RULES)


# --- the one precedence, for every setting -------------------------------------------------
def test_every_setting_follows_one_precedence(tmp_path, monkeypatch):
    """Each key of each kind planted at every level with its own value: the highest wins."""
    for name in SETTINGS_ENVS:
        monkeypatch.delenv(name, raising=False)
    keys = ([("thresholds", f.name) for f in fields(Thresholds)]
            + [("rules", f.name) for f in fields(RegulatorRules)])
    values = {}  # a distinct legal value per level: (toml, config, env)
    for kind, key in keys:
        default = getattr(Thresholds() if kind == "thresholds" else RegulatorRules(), key)
        if isinstance(default, bool):
            values[(kind, key)] = (not default, default, not default)
        elif isinstance(default, float):  # inside each threshold's range (spec/thresholds.py)
            values[(kind, key)] = (default / 2, default / 4, default / 8)
        elif isinstance(default, int):
            values[(kind, key)] = (default + 1, default + 2, default + 3)
        elif key == "ratio_window_unit":
            values[(kind, key)] = ("sessions", "days", "sessions")
        elif key == "coach_health_mode":
            values[(kind, key)] = ("mean", "each", "mean")
        else:
            values[(kind, key)] = ("none", "a-repasser", "none")

    def table(kind: str, level: int) -> str:
        rows = [f"{k} = {json.dumps(v[level])}" for (kd, k), v in values.items() if kd == kind]
        return "\n".join(rows) + "\n"

    def file(level: int, zone: str, day: str, name: str) -> Path:
        path = tmp_path / f"{name}.toml"
        path.write_text(f'timezone = "{zone}"\nstart_of_week = "{day}"\n[paths]\n'
                        f'db = "{name}.duckdb"\nprices = "{name}-prices.toml"\n'
                        f"[thresholds]\n{table('thresholds', level)}"
                        f"[regulator]\n{table('rules', level)}", encoding="utf-8")
        return path

    (tmp_path / "project").mkdir()
    shutil.copy(file(0, "Europe/Paris", "sunday", "toml"), tmp_path / "project" / "brainlab.toml")
    config = file(1, "Asia/Tokyo", "monday", "config")
    env = {"BRAINLAB_TIMEZONE": "America/New_York", "BRAINLAB_START_OF_WEEK": "sunday",
           "BRAINLAB_DB": "env.duckdb", "BRAINLAB_PRICES": "env-prices.toml",
           "BRAINLAB_THRESHOLDS": ",".join(f"{k}={v[2]}" for (kd, k), v in values.items()
                                           if kd == "thresholds"),
           "BRAINLAB_REGULATOR": ",".join(f"{k}={str(v[2]).lower()}" for (kd, k), v
                                          in values.items() if kd == "rules")}
    monkeypatch.chdir(tmp_path / "project")
    monkeypatch.setenv("PWD", str(tmp_path / "project"))

    def level(s: Settings) -> dict:
        out = {"timezone": s.timezone, "start_of_week": s.start_of_week,
               "db": s.db and s.db.name, "prices": s.prices and s.prices.name}
        for kind, key in keys:
            out[f"{kind}.{key}"] = getattr(getattr(s, kind), key)
        return out

    def expected(i: int, zone: str, day: str, name: str) -> dict:
        return {"timezone": zone, "start_of_week": day, "db": f"{name}.duckdb",
                "prices": f"{name}-prices.toml",
                **{f"{kind}.{key}": values[(kind, key)][i] for kind, key in keys}}

    assert level(resolve()) == expected(0, "Europe/Paris", "sunday", "toml")
    assert level(resolve(config)) == expected(1, "Asia/Tokyo", "monday", "config")
    monkeypatch.setenv("BRAINLAB_CONFIG", str(config))
    assert level(resolve()) == expected(1, "Asia/Tokyo", "monday", "config")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert level(resolve(config)) == expected(2, "America/New_York", "sunday", "env")
    # level 1: a command's options over everything, key by key
    top = resolve(config).with_options(timezone="UTC", db=tmp_path / "option.duckdb")
    assert (top.timezone, top.db.name, top.start_of_week) == ("UTC", "option.duckdb", "sunday")
    assert top.origins["timezone"] == "option" and top.origins["start_of_week"] == (
        "$BRAINLAB_START_OF_WEEK")
    # the copy a command hands its kernels is the same object
    assert Settings.from_json(top.to_json()) == top


def test_a_bad_value_is_one_error_naming_its_source_and_key(tmp_path, monkeypatch):
    for name in SETTINGS_ENVS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PWD", str(tmp_path))
    monkeypatch.setenv("BRAINLAB_THRESHOLDS", "coach_ratio=high")
    with pytest.raises(ConfigError, match=r"^\$BRAINLAB_THRESHOLDS: threshold coach_ratio"
                                          r" expects a number, got 'high'$"):
        resolve()
    done = CliRunner().invoke(main, ["usage"])  # docs/settings.md's example, as printed there
    doc = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    shown = doc.split("brainlab usage\n", 1)[1].split("\n", 1)[0]
    assert done.exit_code == 1 and done.output.strip() == shown
    monkeypatch.delenv("BRAINLAB_THRESHOLDS")
    (tmp_path / "brainlab.toml").write_text('timezone = "Mars/Olympus"\n', encoding="utf-8")
    done = CliRunner().invoke(main, ["sql", "SELECT 1"])
    assert done.exit_code == 1
    assert done.output.strip().splitlines() == [
        f"Error: {tmp_path / 'brainlab.toml'}: timezone: unknown time zone 'Mars/Olympus':"
        " give an IANA name like Europe/Paris, America/New_York or UTC"]


# --- the consumers, each against every source -----------------------------------------------
SPEC_ANSWERS: dict[str, tuple] = {}  # a consumer's answer with nothing set, asked once a run


def usage_rows(args: list[str], *extra: str) -> list[dict]:
    done = CliRunner().invoke(main, [*args, "usage", *extra, "--json"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


@pytest.mark.parametrize("source", SOURCES)
def test_usage_reads_the_zone_the_week_start_and_the_store(source, folders, demo, monkeypatch):
    project, other = folders
    monkeypatch.chdir(other)  # nothing set: the SPEC defaults and the machine's zone (UTC)
    if "usage" not in SPEC_ANSWERS:  # the same for every source: asked once
        SPEC_ANSWERS["usage"] = (usage_rows([], "daily", "--db", str(demo["db"])),
                                 usage_rows([], "weekly", "--db", str(demo["db"])))
    defaults = SPEC_ANSWERS["usage"]
    db = project / "stores" / "team.duckdb"
    db.symlink_to(demo["db"])
    args = plant(source, project, other, db, monkeypatch)
    daily, weekly = usage_rows(args, "daily"), usage_rows(args, "weekly")  # no --db: settings'
    assert sum(r["output_tokens"] for r in daily) == sum(r["output_tokens"] for r in defaults[0])
    assert daily != defaults[0]  # days of UTC+14, not of UTC (the machine's, TZ=UTC)
    assert {date.fromisoformat(r["week_start"]).weekday() for r in weekly} == {6}  # Sundays
    assert weekly != defaults[1]


@pytest.mark.parametrize("source", SOURCES)
def test_lab_opens_the_settings_store_and_hands_every_setting_to_its_kernels(
        source, folders, demo, monkeypatch):
    project, other = folders
    db = project / "stores" / "team.duckdb"
    db.symlink_to(demo["db"])
    args = plant(source, project, other, db, monkeypatch)
    done = CliRunner().invoke(main, [*args, "lab", "--print-command", "--no-browser"])
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert f"BRAINLAB_DB={db.resolve()}" in lines and "DEMO" not in done.output
    assert f"BRAINLAB_TIMEZONE={ZONE}" in lines and "BRAINLAB_START_OF_WEEK=sunday" in lines
    summary = next(line for line in lines if line.startswith("settings: "))
    for key, value in {**THRESHOLDS, **RULES}.items():
        assert f"{key}={value}" in summary, (key, summary)


@pytest.mark.parametrize("source", SOURCES)
def test_simulate_reads_the_thresholds_and_the_regulator_rules(source, folders, demo,
                                                               monkeypatch, tmp_path):
    project, other = folders

    def run(args: list[str], name: str) -> tuple[str, str]:
        broker, regulator = tmp_path / f"{name}-b.csv", tmp_path / f"{name}-r.csv"
        for command in (["simulate", "broker", "--policy", "protocol", "--out", str(broker)],
                        ["simulate", "regulator", "--draws", "20", "--out", str(regulator)]):
            done = CliRunner().invoke(main, [*args, *command, "--db", str(demo["db"])])
            assert done.exit_code == 0, done.output
        return broker.read_text(), regulator.read_text()

    monkeypatch.chdir(other)  # nothing set: the SPEC's thresholds and rules
    if "simulate" not in SPEC_ANSWERS:  # the same for every source: asked once
        SPEC_ANSWERS["simulate"] = run([], "spec")
    before = SPEC_ANSWERS["simulate"]
    db = project / "stores" / "team.duckdb"
    args = plant(source, project, other, db, monkeypatch)
    after = run(args, "planted")
    # the rows compared as a set (their order is tested in test_cli_simulate_broker.py): the
    # demo's stale ratios are 0 or 0.5, so stale_ratio_max 0.01 changes no protocol row;
    # context_load_max 1.0 puts the overload alert on more agents
    assert sorted(after[0].splitlines()) != sorted(before[0].splitlines())
    assert after[1] != before[1]  # max_reviews 1, max_relance_same_stop 1: other outcomes


@pytest.mark.parametrize("source", (*SOURCES[:1], *SOURCES[2:], "$BRAINLAB_SETTINGS"))
def test_the_report_sections_read_the_thresholds_and_the_zone(source, folders, demo,
                                                              monkeypatch):
    """open_report is what the report notebook's first cell runs, in its kernel."""
    from brainlab.report.sections import finish, open_report

    project, other = folders
    db = project / "stores" / "team.duckdb"
    if source == "$BRAINLAB_SETTINGS":  # what `report weekly --config FILE` hands its kernel
        plant("--config", project, other, db, monkeypatch)
        monkeypatch.setenv("BRAINLAB_SETTINGS", resolve(project / "team.toml").to_json())
    else:
        plant(source, project, other, db, monkeypatch)
    week = Week.parse(query(demo["db"], "SELECT max(iso_week) AS w FROM weekly_health").w[0])
    ctx = open_report(str(demo["db"]), week.label)
    try:
        assert ctx.timezone == ZONE and ctx.thresholds == planted_settings()[0]
        planted = week_figures(demo["db"], week, planted_settings()[0])
        assert ctx.figures == planted and planted != week_figures(demo["db"], week)
    finally:
        finish(ctx)


def hook_transcript(folder: Path, sid: str = "sess-matrix-1") -> Path:
    lines = [{"type": "user", "sessionId": sid, "timestamp": "2020-01-01T10:00:00.000Z",
              "isSidechain": False, "uuid": "u0", "cwd": "/p",
              "message": {"role": "user", "content": "brain work"}},
             assistant(sid, "2020-01-01T10:01:00.000Z", "m1", "r1", usage(1000, 1000, 0, 0),
                       model=MODEL)]
    return write(folder / "projects" / "-p" / f"{sid}.jsonl", lines)


@pytest.mark.parametrize("source", (SOURCES[0], *SOURCES[2:]))
def test_the_hook_ingests_into_the_settings_store_at_its_prices_under_its_thresholds(
        source, folders, demo, monkeypatch, tmp_path):
    project, other = folders
    db = project / "stores" / "team.duckdb"
    shutil.copy(demo["db"], db)
    path = hook_transcript(tmp_path)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))  # the hook reads only Claude's folders
    plant(source, project, other, db, monkeypatch)
    hook_ingest.main(io.BytesIO(json.dumps({"transcript_path": str(path)}).encode()),
                     foreground=True)  # Claude Code runs it in the project's folder
    cost = query(db, "SELECT sum(cost_usd) AS c FROM cc_requests WHERE session_id ="
                     " 'sess-matrix-1'").c[0]
    assert cost == pytest.approx(2.0)  # 2,000 tokens at the settings' $1,000 per million
    digest = json.loads(Path(cache.file(cache.DIGEST_NAME)).read_text())

    def coach(t: Thresholds) -> str | None:
        names, values = t.signal_arguments()
        found = query(db, f"SELECT coach_reason FROM session_signals_for({names})"
                          " ORDER BY started_at DESC, sess_id DESC LIMIT 1", values)
        return f"coach ({found.coach_reason[0]})" if found.coach_reason[0] else None

    assert digest["coach"] == coach(planted_settings()[0]) != coach(Thresholds())


@pytest.mark.parametrize("source", (SOURCES[0], *SOURCES[2:]))
def test_the_status_line_colours_by_the_settings_thresholds(source, folders, monkeypatch,
                                                            tmp_path):
    project, other = folders
    path = hook_transcript(tmp_path, "sess-line-1")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))  # the status line reads only there
    data = {"session_id": "sess-line-1", "transcript_path": str(path),
            "context_window": {"used_percentage": 60}}
    monkeypatch.setenv("BRAINLAB_CACHE_DIR", str(tmp_path / "before"))
    assert "\x1b[32mctx 60%" in statusline.render(data)  # use-brain: SPEC peak 80, ok
    plant(source, project, other, project / "stores" / "x.duckdb", monkeypatch)
    monkeypatch.setenv("BRAINLAB_CACHE_DIR", str(tmp_path / "after"))
    assert "\x1b[31mctx 60%" in statusline.render(data)  # saturation_peak_use 50: over


PROBE = """from brainlab.lab import notebook_db, notebook_settings, record
from brainlab.metrics.usage_time import kernel_timezone, kernel_week_start
s = notebook_settings()
record("seen", {"db": notebook_db(), "tz": kernel_timezone(), "week": kernel_week_start(),
                "thresholds": s.thresholds.__dict__, "rules": s.rules.__dict__,
                "prices": str(s.prices)})
"""


@pytest.mark.parametrize("source", ("brainlab.toml", "$BRAINLAB_CONFIG", "lab"))
def test_a_notebook_kernel_reads_every_setting(source, folders, monkeypatch, tmp_path):
    """Plain ``papermill`` from the user's folder (the kernel in another folder), and the
    environment ``brainlab lab --config FILE`` gives JupyterLab."""
    project, other = folders
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PROBE)])
    nbformat.write(nb, str(nbs / "probe.ipynb"))
    db = project / "stores" / "team.duckdb"
    shutil.copy(ROOT / "tests" / "conftest.py", db)  # any file: the lab wants it to exist
    if source == "lab":
        plant("--config", project, other, db, monkeypatch)
        env = {}
        monkeypatch.setattr("brainlab.lab.os.execve",
                            lambda _cmd, _args, e: env.update(e) or sys.exit(0))
        monkeypatch.setattr("brainlab.lab.prepare_notebooks", lambda *a: [])
        done = CliRunner().invoke(main, ["--config", str(project / "team.toml"), "lab",
                                         "--no-browser", "--dir", str(nbs), "--work", str(nbs)])
        assert done.exit_code == 0, done.output
        monkeypatch.setenv("BRAINLAB_SETTINGS", env["BRAINLAB_SETTINGS"])
    else:
        plant(source, project, other, db, monkeypatch)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    run = subprocess.run([str(PAPERMILL), str(nbs / "probe.ipynb"), str(tmp_path / "out.ipynb"),
                          "--cwd", str(nbs), "-k", "python3"], env=env, cwd=Path.cwd(),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-1500:]
    seen = read_records(tmp_path / "out.ipynb")["seen"]
    thresholds, rules = planted_settings()
    assert seen == {"db": str(db.resolve()) if source == "lab" else str(db), "tz": ZONE,
                    "week": "sunday", "thresholds": asdict(thresholds), "rules": asdict(rules),
                    "prices": str(project / "prices.toml")}


def test_settings_module_is_what_every_consumer_imports():
    """One object: the consumers ask brainlab.settings, none builds Thresholds() itself."""
    for path in [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "brainlab" / "live").glob("*.py"),
                 ROOT / "brainlab" / "report" / "sections.py"]:
        text = path.read_text(encoding="utf-8")
        assert "Thresholds()" not in text.replace("return Thresholds()", ""), path
        assert "load_settings(" not in text, path
    assert settings_module.current is not None


# --- as a user would: a project folder with brainlab.toml, then the same through --config ---
BRAINLAB = Path(sys.executable).with_name("brainlab")
USER_TOML = f'timezone = "{ZONE}"\n[paths]\ndb = "stores/team.duckdb"\n[thresholds]\ncoach_ratio = 0.3\n'


def shell(folder: Path, command: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """``command`` typed in a shell in ``folder`` (the console scripts of this checkout)."""
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS_ENVS}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["TZ"] = "UTC"
    return subprocess.run(["bash", "-c", f"cd '{folder}' && {command}"], env=env, input=stdin,
                          capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize("how", ["brainlab.toml", "--config from another folder"])
def test_a_user_project_folder_drives_every_entry_point(how, tmp_path, demo, monkeypatch):
    """timezone, [paths] db and [thresholds] coach_ratio = 0.3: each entry point uses all three
    that it reads (usage: zone and store; report: all; lab: names the store, zone, thresholds;
    notebook 01 under papermill: store and thresholds; hook ingest: store and thresholds of its
    digest; status line: the digest's coach word)."""
    monkeypatch.setenv("BRAINLAB_CACHE_DIR", str(tmp_path / "cache"))
    project = tmp_path / "project"
    (project / "stores").mkdir(parents=True)
    db = project / "stores" / "team.duckdb"
    shutil.copy(demo["db"], db)
    if how == "brainlab.toml":
        (project / "brainlab.toml").write_text(USER_TOML, encoding="utf-8")
        where, opt = project, ""
    else:
        (project / "team.toml").write_text(USER_TOML, encoding="utf-8")
        where, opt = tmp_path / "elsewhere", f"--config '{project / 'team.toml'}' "
        where.mkdir()
    planted = Thresholds(coach_ratio=0.3)
    names, values = planted.signal_arguments()

    usage = shell(where, f"{BRAINLAB} {opt}usage daily --json")  # no --db: the settings'
    assert usage.returncode == 0, usage.stderr
    default = shell(where, f"{BRAINLAB} usage daily --json --db '{db}' --timezone UTC")
    assert json.loads(usage.stdout) != json.loads(default.stdout)  # days of UTC+14
    assert sum(r["output_tokens"] for r in json.loads(usage.stdout)) == sum(
        r["output_tokens"] for r in json.loads(default.stdout))

    lab = shell(where, f"{BRAINLAB} {opt}lab --print-command --no-browser")
    assert lab.returncode == 0, lab.stderr
    assert f"BRAINLAB_DB={db}" in lab.stdout.splitlines()
    assert f"BRAINLAB_TIMEZONE={ZONE}" in lab.stdout and "coach_ratio=0.3" in lab.stdout

    # the live commands first: a kernel the report or papermill left shutting down would
    # still hold the store, and the hook never waits for it (it spools instead)
    transcript = hook_transcript(tmp_path, "sess-user-1")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))  # Claude's folders (issue 46 item 2)
    hook = shell(where, f"{BRAINLAB} {opt}hook ingest --foreground",
                 json.dumps({"transcript_path": str(transcript)}))
    assert hook.returncode == 0 and hook.stdout == "", hook.stderr
    assert query(db, "SELECT count(*) AS n FROM cc_requests WHERE session_id ="
                     " 'sess-user-1'").n[0] == 1  # into the settings' store
    digest = json.loads(Path(cache.file(cache.DIGEST_NAME)).read_text())
    coach = query(db, f"SELECT coach_reason FROM session_signals_for({names})"
                      " ORDER BY started_at DESC, sess_id DESC LIMIT 1", values).coach_reason[0]
    assert digest["coach"] == (f"coach ({coach})" if coach else None)

    line = shell(where, f"{BRAINLAB} {opt}statusline --plain",
                 json.dumps({"session_id": "sess-user-1", "transcript_path": str(transcript),
                             "context_window": {"used_percentage": 60}}))
    assert line.returncode == 0, line.stderr
    assert (digest["coach"] or "ctx 60%") in line.stdout

    by_week = {w: n for w, n in zip(*(lambda f: (f.iso_week, f.coach_triggers))(
        query(db, "SELECT * FROM weekly_health ORDER BY week_start")), strict=True)}
    with_03 = query(db, f"SELECT iso_week, coach_triggers FROM weekly_health_for({names})"
                        " ORDER BY week_start", values)
    changed = [w for w, n in zip(with_03.iso_week, with_03.coach_triggers, strict=True)
               if by_week[w] != n]
    assert changed, "the demo must hold a week coach_ratio 0.3 changes"

    report = shell(where, f"{BRAINLAB} {opt}report weekly --week {changed[0]} --out reports")
    assert report.returncode == 0, report.stderr
    summary = json.loads((where / "reports" / changed[0] / "summary.json").read_text())
    assert summary["coach_triggers"] == int(with_03.set_index("iso_week").coach_triggers[
        changed[0]]) != by_week[changed[0]]
    html = (where / "reports" / changed[0] / "weekly_health.html").read_text()
    assert f"thresholds: {project / ('brainlab.toml' if not opt else 'team.toml')}" in html

    nb01 = ROOT / "notebooks" / "01_metabolism_trends.ipynb"
    env = f"BRAINLAB_CONFIG='{project / 'team.toml'}' " if opt else ""  # papermill: no --config
    pm = shell(where, f"{env}{BRAINLAB.with_name('papermill')} {nb01} out01.ipynb"
                      f" --cwd {ROOT / 'notebooks'}")  # the kernel runs in notebooks/
    assert pm.returncode == 0, pm.stderr[-1500:]
    records = read_records(where / "out01.ipynb")
    assert records["coach_weeks"] == [w for w, n in zip(with_03.iso_week, with_03.coach_triggers,
                                                        strict=True) if n > 0]
    assert records["coach_weeks"] != [w for w, n in by_week.items() if n > 0]
