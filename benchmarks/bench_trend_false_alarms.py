"""False alarms of the change-point scan on null histories, and what it finds with a plant.

Builds ``--seeds`` synthetic brains with no planted effect (``SynthOptions(plants=())``, as
``brainlab synth --plants none``), each with its transcripts, ingests them (a store per seed,
kept in ``--cache`` so a second run only scans), scans every series weekly and daily
(``brainlab.metrics.trends.changes``) and prints the share of histories with at least one
flagged change, with its Wilson interval: the false-alarm rate, to compare with the
issue's "at most 1 in 20". Then the first ``--planted-seeds`` seeds with the
``build-week`` plant alone: the
share of histories where a change is found within one week of the planted week (the
detection rate), in the same run.

    PYTHONPATH=. python benchmarks/bench_trend_false_alarms.py --seeds 60 --first 200
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from benchkit import emit, load_average

from brainlab.demo import build_store
from brainlab.metrics import changepoints, trends
from brainlab.metrics.intervals import wilson
from brainlab.spec.weeks import Week
from brainlab.synth import SynthOptions


def build(folder: Path, seed: int, weeks: int, plants: tuple[str, ...]) -> Path:
    """A store of a synthetic brain (cached: built once per folder)."""
    db = folder / "brainlab.duckdb"
    if (folder / "done").exists():
        return db
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    options = SynthOptions(weeks=weeks, seed=seed, plants=plants)
    build_store(folder / "brain", db, weeks=weeks, seed=seed, workers=1, plants=plants)
    shutil.rmtree(folder / "brain")
    (folder / "done").write_text(Week.of(options.start + _days(7 * options.planted_week)).label)
    return db


def _days(n: int):
    from datetime import timedelta

    return timedelta(days=n)


def main() -> None:
    """Build, scan, print the false-alarm and detection rates."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=60)
    parser.add_argument("--first", type=int, default=200, help="first seed (calibration: 100-152)")
    parser.add_argument("--weeks", type=int, default=12)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/brainlab-trend-bench"))
    parser.add_argument("--planted-seeds", type=int, default=20,
                        help="seeds of the detection half (the first ones; 0: skip it)")
    args = parser.parse_args()
    seeds = range(args.first, args.first + args.seeds)
    print(f"change points: BETA {changepoints.BETA:g} x ln(points); {args.seeds} seeds "
          f"from {args.first}, {args.weeks} weeks (load average {load_average()})")
    flagged, series_hits, started = 0, {}, time.monotonic()
    for seed in seeds:
        db = build(args.cache / f"null-{args.weeks}-{seed}", seed, args.weeks, ())
        obs = trends.observations(db)
        found = [trends.changes(obs, p) for p in ("week", "day")]
        names = sorted({s for f in found for s in f["series"]})
        if names:
            flagged += 1
            for name in names:
                series_hits[name] = series_hits.get(name, 0) + 1
            print(f"  seed {seed}: flagged {', '.join(names)}", flush=True)
    rate = wilson(flagged, args.seeds)
    print(f"null histories with a flagged change: {flagged} of {args.seeds} = "
          f"{rate.value:.1%} (95% Wilson {rate.low:.1%} to {rate.high:.1%}); "
          f"budget: at most 1 in 20 (5%); {time.monotonic() - started:.0f} s")
    figures = {"seeds": args.seeds, "null_flagged": flagged, "false_alarm_rate": rate.value,
               "false_alarm_low": rate.low, "false_alarm_high": rate.high,
               "series": series_hits}
    if args.planted_seeds:
        found_near, started = 0, time.monotonic()
        planted_seeds = list(seeds)[:args.planted_seeds]
        for seed in planted_seeds:
            folder = args.cache / f"planted-{args.weeks}-{seed}"
            db = build(folder, seed, args.weeks, ("build-week",))
            planted = Week.parse((folder / "done").read_text())
            weekly = trends.changes(trends.observations(db), "week")
            near = {planted.shifted(d).label for d in (-1, 0, 1)}
            if set(weekly["week"]) & near:
                found_near += 1
            else:
                print(f"  seed {seed}: planted {planted.label}, found "
                      f"{sorted(set(weekly['week'])) or 'nothing'}", flush=True)
        hit = wilson(found_near, len(planted_seeds))
        print(f"build-week histories with a change within one week of the plant: "
              f"{found_near} of {len(planted_seeds)} = {hit.value:.1%} (95% Wilson {hit.low:.1%} to "
              f"{hit.high:.1%}); {time.monotonic() - started:.0f} s")
        figures |= {"planted_found": found_near, "detection_rate": hit.value}
    emit("trend_false_alarms", **figures)


if __name__ == "__main__":
    main()
