"""Issue 47 items 4 and 6: zones, thresholds and settings files a user (or an attacker) can
write end in one named refusal, never "This is a brainlab bug".

Zones: every name Python's zoneinfo opens is either a zone DuckDB accepts (as is, or
converted: ``posix/``, ``right/``, ``localtime``) or one ConfigError; the machine's POSIX
``TZ`` rules work or fall back to UTC with a warning. Thresholds: each field refuses nan,
inf, negatives, 2^64 and values outside its range in spec/, naming the key. Then every class
through the console script as a user runs it, batched in one child process.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
import zoneinfo
from pathlib import Path

import pytest
from conftest import seeded_cache, write

from brainlab.common.errors import ConfigError
from brainlab.spec.thresholds import THRESHOLD_CHOICES, THRESHOLD_RANGES, Thresholds
from brainlab.store.connection import memory
from brainlab.store.zones import ZONE_MAX_CHARS, check_zone, machine_zone, posix_rule_zone


def test_every_zone_python_opens_is_one_duckdb_takes_or_a_config_error():
    """The general rule: zoneinfo's whole list, and its posix/ and right/ copies."""
    names = sorted(zoneinfo.available_timezones() | {"posixrules", "localtime", "Factory"})
    names += [f"{p}/{n}" for n in names[::7] for p in ("posix", "right")]
    accepted, refused = {}, []
    for name in names:
        try:
            accepted[name] = check_zone(name, "t")
        except ConfigError as exc:
            assert str(exc).count("\n") == 0
            refused.append(name)
    con = memory()
    try:
        bad = con.execute("""
            SELECT list(zone) FROM (SELECT DISTINCT unnest(?) AS zone)
            WHERE zone NOT IN (SELECT name FROM pg_timezone_names())""",
                          [sorted(set(accepted.values()))]).fetchone()[0]
    finally:
        con.close()
    assert bad is None  # DuckDB knows every name check_zone returns
    assert accepted["posix/Europe/Paris"] == "Europe/Paris" if "posix/Europe/Paris" in accepted \
        else True
    assert check_zone("right/UTC") == "UTC" and check_zone("posix/Europe/Paris") == "Europe/Paris"
    assert check_zone("europe/paris") == "Europe/Paris"
    assert "posixrules" in refused
    assert len(accepted) > 550


def test_a_long_zone_is_refused_without_echoing_it():
    with pytest.raises(ConfigError) as caught:
        check_zone("Europe/" * 100, "timezone")
    assert len(str(caught.value)) < 250 and "(700 bytes)" in str(caught.value)
    assert len("America/Argentina/ComodRivadavia") < ZONE_MAX_CHARS


@pytest.mark.parametrize(("rule", "zone"), [
    ("UTC0", "UTC"), ("GMT0", "UTC"), ("JST-9", "Etc/GMT-9"), ("<+03>-3", "Etc/GMT-3"),
    ("EST5", "Etc/GMT+5"), ("CET-1CEST,M3.5.0,M10.5.0/3", None), ("IST-5:30", None),
    ("XYZ-20", None)])
def test_posix_rules_of_fixed_whole_hours_are_their_etc_gmt_zone(rule, zone):
    assert posix_rule_zone(rule) == zone


def test_the_machine_s_posix_rule_works_or_falls_back_to_utc_with_one_warning(monkeypatch, capsys):
    for tz, zone, warned in (("UTC0", "UTC", False), ("JST-9", "Etc/GMT-9", False),
                             ("CET-1CEST,M3.5.0,M10.5.0/3", "UTC", True),
                             ("posixrules", "UTC", True), (":Asia/Tokyo", "Asia/Tokyo", False),
                             ("EST5EDT", "EST5EDT", False)):
        monkeypatch.setenv("TZ", tz)
        assert machine_zone() == zone, tz
        err = capsys.readouterr().err
        assert (err.count("Warning:") == 1) is warned and "\n" not in err.rstrip("\n"), (tz, err)


@pytest.mark.parametrize("key", sorted(THRESHOLD_RANGES))
def test_each_threshold_refuses_non_finite_huge_and_out_of_range_values(key):
    low, high, why = THRESHOLD_RANGES[key]
    default = getattr(Thresholds(), key)
    assert low <= default <= high and why
    for bad in (math.nan, math.inf, -math.inf, 2**64, -(2**64), high + 1, low - 1, "x" * 500,
                {"a": {"b": 1}}):
        with pytest.raises(ConfigError, match=f"^threshold {key} ") as caught:
            Thresholds().replace(**{key: bad})
        assert len(str(caught.value)) < 300
    assert getattr(Thresholds().replace(**{key: high}), key) == high


def test_every_threshold_has_a_range_or_choices():
    names = {f.name for f in dataclasses.fields(Thresholds)}
    assert names == set(THRESHOLD_RANGES) | set(THRESHOLD_CHOICES)


# --- the console script, as a user runs it: one child process, many cases -------------------
DRIVER = r"""
import contextlib, io, json, os, sys
import brainlab.cli as root  # the command tree registered, as `python -m brainlab.cli`
def _exit(code):
    raise SystemExit(code)
os._exit = _exit  # run() leaves with os._exit after a closed command: stay for the next case
cases, results = json.loads(sys.stdin.read()), []
base = dict(os.environ)
for case in cases:
    os.environ.clear(); os.environ.update(base); os.environ.update(case.get("env", {}))
    os.chdir(case["cwd"]); os.environ["PWD"] = case["cwd"]
    sys.argv = ["brainlab", *case["argv"]]
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            root.run()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    results.append({"code": code, "err": err.getvalue(), "out": out.getvalue()[:2000],
                    "out_len": len(out.getvalue())})
print(json.dumps(results))
"""
BIG = 2_097_152


def hostile_files(folder: Path) -> dict[str, Path]:
    """One settings file per hostile class."""
    files = {
        "deep-tables": "[thresholds]\nratio_window = " + "{a=" * 5000 + "1" + "}" * 5000,
        "deep-arrays": "timezone = " + "[" * 5000 + "]" * 5000,
        "deep-keys": "[thresholds]\n" + "a." * 3000 + "b = 1",
        "huge": "# " + "x" * 1_200_000,
        "binary": "\x00\x01\xff",
        "nan": "[thresholds]\nratio_healthy = nan", "inf": "[thresholds]\ncoach_ratio = inf",
        "negative": "[thresholds]\ncoach_last_n = -3",
        "2^64": "[thresholds]\nratio_window = 18446744073709551616",
        "out-of-range": "[thresholds]\nconserve_peak = 150",
        "table-as-value": "[thresholds]\ncoach_ratio = {a = {b = 1}}",
        "long-key": "[thresholds]\n" + "k" * 100_000 + " = 1",
        "long-zone": 'timezone = "' + "Europe/" * 60 + '"',
        "posix-zone": 'timezone = "CET-1CEST,M3.5.0,M10.5.0/3"',
        "posixrules": 'timezone = "posixrules"',
        "bad-week": "start_of_week = " + "[" * 3 + "]" * 3,
        "bad-path": "[paths]\ndb = {a = 1}",
    }
    paths = {name: write(folder, f"{name}.toml", text) for name, text in files.items()}
    (folder / "invalid-utf8.toml").write_bytes(b"timezone = \"\xff\xfe\"\n")
    paths["invalid-utf8"] = folder / "invalid-utf8.toml"
    fifo = folder / "fifo.toml"
    os.mkfifo(fifo)
    paths["fifo"] = fifo
    return paths


def test_every_hostile_class_is_one_error_line_through_the_console_script(tmp_path,
                                                                          corpus_store):
    db = str(corpus_store)
    files = hostile_files(tmp_path / "cfg")
    cwd = str(tmp_path)
    daily = ["usage", "daily", "--db", db]
    cases: list[tuple[str, dict, str | None]] = []  # (label, case, expected text in the error)
    for name, path in files.items():
        cases.append((f"--config {name}", {"argv": ["--config", str(path), *daily]},
                      str(path) if name != "fifo" else "not a regular file"))
    for zone, expected in (("posixrules", "unknown time zone"), ("Mars/Olympus", "unknown"),
                           ("A" * 300, "(300 bytes)"), ("UTC0", "give UTC"),
                           ("CET-1CEST,M3.5.0,M10.5.0/3", "POSIX TZ rule"),
                           ("\x1b[2J", "unknown time zone"), ("../../etc/passwd", "unknown")):
        cases.append((f"--timezone {zone[:20]}", {"argv": [*daily, "--timezone", zone]},
                      expected))
        cases.append((f"$BRAINLAB_TIMEZONE {zone[:20]}",
                      {"argv": daily, "env": {"BRAINLAB_TIMEZONE": zone}}, expected))
    for zone in ("localtime", "right/UTC", "posix/Europe/Paris", "Etc/GMT-9"):
        cases.append((f"--timezone {zone} works", {"argv": [*daily, "--timezone", zone]}, None))
        cases.append((f"weekly {zone} works", {"argv": ["usage", "weekly", "--db", db,
                                                        "--timezone", zone]}, None))
    for tz in ("UTC0", "CET-1CEST,M3.5.0,M10.5.0/3", "JST-9", "posixrules", "Mars/Olympus"):
        cases.append((f"TZ={tz} works", {"argv": daily, "env": {"TZ": tz}}, None))
    for env, expected in ((("BRAINLAB_THRESHOLDS", "ratio_healthy=nan"), "finite"),
                          (("BRAINLAB_THRESHOLDS", "coach_last_n=18446744073709551616"), "range"),
                          (("BRAINLAB_REGULATOR", "max_reviews=1e400"), "finite"),
                          (("BRAINLAB_SETTINGS", "[" * 100_000), "BRAINLAB_SETTINGS"),
                          (("BRAINLAB_START_OF_WEEK", "x" * 10_000), "monday or sunday")):
        cases.append((f"${env[0]}", {"argv": daily, "env": dict([env])}, expected))
    cases.append(("$BRAINLAB_REGULATOR 2^64", {"argv": daily, "env": {
        "BRAINLAB_REGULATOR": "max_reviews=18446744073709551616"}}, "out of range"))
    cases.append(("simulate --draws 10^30", {"argv": ["simulate", "regulator", "--db", db,
                                                      "--draws", "9" * 30]}, "at most"))
    for label, argv, expected in (
            ("--miss-overhead 1e400", ["simulate", "broker", "--db", db, "--miss-overhead",
                                       "1e400"], "finite"),
            ("--default-bytes 1e400", ["simulate", "broker", "--db", db, "--default-bytes",
                                       "1e400"], "finite"),
            ("--prices 300 characters", ["prices", "--prices", "p" * 300], "price file")):
        cases.append((label, {"argv": argv}, expected))
    cases.append(("--threshold nan", {"argv": ["simulate", "broker", "--db", db, "--threshold",
                                               "context_load_max=nan"]}, "finite"))
    for case in (c for _, c, _ in cases):
        case["cwd"] = cwd
    done = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps([c for _, c, _ in cases]),
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "BRAINLAB_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.splitlines()[-1])
    problems = []
    for (label, _case, expected), got in zip(cases, results, strict=True):
        err = got["err"]
        lines = [ln for ln in err.splitlines() if not ln.startswith("Warning:")]
        if "Traceback" in err or "brainlab bug" in err or len(err) > 1000:
            problems.append((label, err[:300]))
        elif expected is None and got["code"] != 0:
            problems.append((label, "should work", err[:300]))
        elif expected is not None and not (got["code"] == 1 and len(lines) == 1
                                           and lines[0].startswith("Error:") and expected in err):
            problems.append((label, got["code"], err[:300]))
    assert problems == []
    warned = [got["err"] for (label, _, _), got in zip(cases, results, strict=True)
              if label.startswith("TZ=CET")]
    assert warned[0].count("Warning:") == 1 and "UTC" in warned[0]


def test_a_huge_line_in_a_brain_file_is_a_bounded_error_row_and_check_output(tmp_path):
    """`ingest brain` then `errors` and `check --format sarif` through the console script."""
    brain = tmp_path / "brain"
    write(brain, "progression/metabolism/2026-03-01-sess-20260301-0800-x.md",
          "# Metabolism — 2026-03-01 — sess-20260301-0800-x\n\n| Clé | Valeur |\n|---|---|\n"
          "| type | work |\n\n" + "q" * BIG + "\n")
    write(brain, "progression/broker/2026-03-01-p-core-01.md",
          "Context-broker — inhale sprint p-core-01\n\nProjet détecté : p\n\nSource map :\n"
          f'  developer → ["a.ts", "b.ts", "{"x" * BIG}.ts"]\n')
    db = str(tmp_path / "b.duckdb")
    cases = [{"argv": ["ingest", "brain", str(brain), "--db", db]},
             {"argv": ["errors", "--db", db]},
             {"argv": ["check", str(brain), "--format", "sarif"]},
             {"argv": ["check", str(brain)]}]
    for case in cases:
        case["cwd"] = str(tmp_path)
    # a cache of its own holding the run's empty-store template: the new store is copied
    # from it, not built (~2 CPU-s, docs/testing.md stop 27)
    done = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps(cases),
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ,
                               "BRAINLAB_CACHE_DIR": str(seeded_cache(tmp_path / "cache"))})
    assert done.returncode == 0, done.stderr[-3000:]
    ingest, errors, sarif, text = json.loads(done.stdout.splitlines()[-1])
    assert ingest["code"] == 0 and errors["code"] == 0, (ingest, errors)
    assert f"({BIG:,} bytes)" in errors["out"] and errors["out_len"] < 20_000
    assert sarif["out_len"] < 60_000 and text["out_len"] < 20_000
    assert f"({BIG + 3:,} bytes)" in text["out"]


def test_the_tuner_s_grids_lie_inside_the_ranges():
    """`tune` writes its pick into brainlab.toml: every candidate must be a value the file takes."""
    from brainlab.sim.tuning.grids import BREATH_GRID, SESSION_GRID

    for key, values in {**SESSION_GRID, **BREATH_GRID}.items():
        for value in values:
            Thresholds().replace(**{key: value})
