"""The synthetic brain: a realistic brain written as real files, with documented planted effects.

``synthesize(out_dir, options)`` draws a plan (synth/model.py), runs the registered plants
(synth/registry.py) on the plan, renders it into files in memory (synth/files.py), runs the
plants on the files, and writes each file once with ``synth_manifest.json`` listing what was
planted where. Deterministic for a seed; see docs/synth.md.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from datetime import datetime, time
from pathlib import Path

from brainlab.common.errors import SourceError

# the plant modules register their plants when imported (run order: registry.ordered)
from brainlab.synth import (  # noqa: F401
    audit_plants,
    boot_close_plants,
    brain,
    brain_plants,
    compliance,
    mode_plants,
    registry,
    replay_plants,
    tuning_plants,
)
from brainlab.synth.circuits import circuit_files
from brainlab.synth.files import stream
from brainlab.synth.focus import focus_files
from brainlab.synth.model import SynthOptions, SynthSession, plan_sessions
from brainlab.synth.sprint_transcripts import write_sprint_transcripts
from brainlab.synth.sprints import plan_for, sprint_files
from brainlab.synth.telemetry import telemetry_files
from brainlab.synth.transcripts import write_transcripts

MANIFEST = "synth_manifest.json"


@dataclass
class SynthManifest:
    """What a synthesis wrote: file count, planted effects, and the sessions it planned."""

    out_dir: Path
    files_written: int
    planted: list[dict] = field(default_factory=list)
    sessions: list[SynthSession] = field(default_factory=list)

    def lines(self) -> list[str]:
        """What was written and planted, as ``brainlab synth`` prints it."""
        return [f"wrote {self.files_written} files to {self.out_dir}",
                *(f"  planted: {effect['effect']}: {effect['where']}" for effect in self.planted)]


def synthesize(out_dir: Path, options: SynthOptions | None = None) -> SynthManifest:
    """Write a synthetic brain into ``out_dir`` (replacing a previous synthetic brain there)."""
    options = options or SynthOptions()
    chosen = registry.selected(options)  # an unknown name is refused before anything is removed
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        if not (out_dir / MANIFEST).exists():
            raise SourceError(f"{out_dir} is not empty and holds no {MANIFEST}: refusing to "
                              "overwrite a folder brainlab did not generate")
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    seed = options.seed
    own = stream(seed, "brain")  # the brain's own files: plan, then logs, then workspaces
    sessions = plan_sessions(options, own, brain.BOOT_AGENTS, brain.DOMAIN_AGENTS, chosen)
    ctx = registry.SynthContext(options, sessions,
                                plan_for(sessions, stream(seed, "sprints")))
    planted = registry.run("plan", ctx)  # the plan's plants, before any file exists
    ctx.logged = ctx.logged or ctx.sessions  # what the logs say, when no plant changed it
    files, sessions = ctx.files, ctx.sessions
    # each area renders the plan from its own named stream into the files in memory
    brain.write_agents(files)
    brain.write_contexts(files)
    brain.write_metabolism(files, ctx.logged, options, own, skip=ctx.no_log)
    brain.write_claims(files, sessions, options)
    brain.write_handoffs(files, sessions)
    brain.write_workspaces(files, options, own, ram_lines=ctx.ram_lines)
    planted += sprint_files(files, ctx.sprint_plan)
    planted += circuit_files(files, stream(seed, "circuits"),
                             datetime.combine(options.start, time(8, 0)),
                             datetime.combine(options.end, time(20, 0)),
                             n_tickets=6 * options.weeks, change=ctx.circuit_rules_change)
    planted += write_transcripts(files, sessions, stream(seed, "transcripts"),
                                 skip=ctx.no_transcript)
    planted += write_sprint_transcripts(files, ctx.sprint_plan,
                                        stream(seed, "sprint-transcripts"))
    planted += registry.run("files", ctx)  # breaches, changed in memory before any write
    # otel (issue 26): the telemetry the final transcripts' sessions would have sent
    planted += telemetry_files(files, stream(seed, "telemetry"))
    # helloWorld's focus and the sprints only it names: after every other writer (own stream)
    planted += focus_files(files, _last_end(sessions, ctx.sprint_plan),
                           max(s.started_at for s in sessions), stream(seed, "focus"))
    files.put(MANIFEST, json.dumps({
        "seed": options.seed, "weeks": options.weeks, "start": options.start.isoformat(),
        "end": options.end.isoformat(), "sessions": len(sessions), "planted": planted,
        "plants": ctx.counts,  # every registered plant, with what it planted
    }, indent=2, ensure_ascii=False) + "\n")
    return SynthManifest(out_dir, files.write(out_dir), planted, sessions)


__all__ = ["PLANTS", "SynthManifest", "SynthOptions", "SynthSession", "synthesize"]

PLANTS = registry.PLANTS


def _last_end(sessions: list[SynthSession], sprint_plan: list[dict]) -> datetime:
    """When the history's last session or sprint ended (the focus is written then)."""
    ends = [s.ended_at for s in sessions] + [s["ended_at"] for s in sprint_plan]
    return max(ends)
