"""The synthetic brain: a realistic brain written as real files, with documented planted effects.

``synthesize(out_dir, options)`` draws a plan (synth/model.py), renders it with each format's
writer, and writes ``synth_manifest.json`` listing what was planted where. Deterministic for
a seed.
"""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import dataclass, field
from datetime import datetime, time
from pathlib import Path

from brainlab.errors import SourceError
from brainlab.synth import brain, compliance, mode_plants
from brainlab.synth.audit_plants import plant_audit
from brainlab.synth.circuits import write_circuits
from brainlab.synth.model import SynthOptions, SynthSession, plan_sessions
from brainlab.synth.sprint_transcripts import write_sprint_transcripts
from brainlab.synth.sprints import PROJECT, plan_for, write_sprints
from brainlab.synth.telemetry import write_telemetry
from brainlab.synth.transcripts import write_transcripts

MANIFEST = "synth_manifest.json"


@dataclass
class SynthManifest:
    """What a synthesis wrote: file count, planted effects, and the sessions it planned."""

    out_dir: Path
    files_written: int
    planted: list[dict] = field(default_factory=list)
    sessions: list[SynthSession] = field(default_factory=list)


def synthesize(out_dir: Path, options: SynthOptions | None = None) -> SynthManifest:
    """Write a synthetic brain into ``out_dir`` (replacing a previous synthetic brain there)."""
    options = options or SynthOptions()
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        if not (out_dir / MANIFEST).exists():
            raise SourceError(f"{out_dir} is not empty and holds no {MANIFEST}: refusing to "
                              "overwrite a folder brainlab did not generate")
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(options.seed)
    writer = brain.Writer(out_dir)
    sessions = plan_sessions(options, rng, brain.BOOT_AGENTS, brain.DOMAIN_AGENTS)
    sessions = mode_plants.fit_modes(sessions)  # working modes within SPEC §3.3 budgets
    planted = [brain.planted_build_week(sessions, options), brain.planted_wasted_agent(),
               brain.plant_xss(sessions)]
    brain.write_agents(writer)
    brain.write_contexts(writer)
    # logs and transcripts disagree where planted (issue 13); the sprint plan is drawn early
    # (own seeded stream, same result) so the unmatched log sits away from every sprint
    sprint_plan = plan_for(sessions, random.Random(options.seed + 4))
    audit = plant_audit(sessions, options, [sp["started_at"] for sp in sprint_plan])
    planted += audit.planted
    planted += brain.write_metabolism(writer, audit.logged, options, rng, skip=audit.no_log)
    planted += brain.write_claims(writer, sessions, options)
    brain.write_handoffs(writer, sessions)
    planted += brain.write_workspaces(writer, sessions, options, rng)
    # Each area draws from its own seeded stream, so adding one never changes another.
    planted += write_sprints(out_dir, sessions, random.Random(options.seed + 4))
    area_start = datetime.combine(options.start, time(8, 0))
    area_end = datetime.combine(options.end, time(20, 0))
    planted += write_circuits(out_dir, random.Random(options.seed * 1000 + 5), area_start,
                              area_end, n_tickets=6 * options.weeks)
    # Claude Code transcripts of the same sessions (own RNG: the brain files stay as they were)
    planted += write_transcripts(out_dir, sessions, random.Random(options.seed * 7919 + 3),
                                 skip=audit.no_transcript)
    # ... and the same sprint plan (same seed as write_sprints) run as transcript sessions
    planted += write_sprint_transcripts(out_dir, sprint_plan,
                                        random.Random(options.seed * 7919 + 11))
    # last: breaches of the compliance rules (issue 14), edited into the files written above
    planted += compliance.plant(out_dir, sessions, options, sprint_plan, PROJECT)
    # otel (issue 26): the telemetry those transcripts' sessions would have sent (own RNG)
    planted += write_telemetry(out_dir, random.Random(options.seed * 7919 + 26))
    files = sum(1 for p in out_dir.rglob("*") if p.is_file()) + 1
    manifest = SynthManifest(out_dir, files, planted, sessions)
    (out_dir / MANIFEST).write_text(json.dumps({
        "seed": options.seed, "weeks": options.weeks, "start": options.start.isoformat(),
        "end": options.end.isoformat(), "sessions": len(sessions), "planted": planted,
    }, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


__all__ = ["SynthManifest", "SynthOptions", "SynthSession", "synthesize"]
