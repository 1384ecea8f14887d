"""The plant registry: every planted effect of the synthetic brain as a named, registered function.

A plant is a small function ``fn(ctx, rng) -> list of manifest entries`` registered with
:func:`plant` under a unique name, with what it plants, the SPEC section it exercises and the
rules it breaks. ``rng`` is the plant's own stream (:func:`brainlab.synth.files.stream` of the
seed and the plant's name), so adding, removing or reordering a plant never changes another
plant's draws. Stage ``plan`` plants run on the drawn sessions before any file exists; stage
``files`` plants run on the rendered :class:`~brainlab.synth.files.BrainFiles` in memory,
before the one writer writes each file once. Within a stage plants run in the order of
their names, except that a plant runs after the plants it names in ``after``: the order
never depends on which module was imported first.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from brainlab.synth.files import BrainFiles, stream
from brainlab.synth.model import SynthOptions, SynthSession

STAGES = ("plan", "files")


@dataclass
class SynthContext:
    """What plants read and change: the options, the plan, and the brain's files in memory.

    ``logged`` is what the metabolism logs say (the audit plants make it differ from the
    plan); ``no_log`` / ``no_transcript`` are sessions whose log / transcript is not
    written; ``picked`` holds the sessions a transcript plant already changed, so two
    plants never break the same session; ``kept_expired`` the workspaces left past their
    lifecycle on purpose; ``ram_lines`` the length a plan plant gives a workspace's ram.md
    (the renderer draws the others); ``counts`` what each plant planted (see :func:`run`).
    """

    options: SynthOptions
    sessions: list[SynthSession]
    sprint_plan: list[dict]
    files: BrainFiles = field(default_factory=BrainFiles)
    logged: list[SynthSession] = field(default_factory=list)
    no_log: set[str] = field(default_factory=set)
    no_transcript: set[str] = field(default_factory=set)
    picked: set[str] = field(default_factory=set)
    kept_expired: list[str] = field(default_factory=list)
    ram_lines: dict[str, int] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    # (first day, rule spec): tickets from that day run under other regulator rules
    circuit_rules_change: tuple | None = None

    def stream(self, name: str) -> random.Random:
        """The random stream called ``name`` for this brain's seed."""
        return stream(self.options.seed, name)


PlantFn = Callable[[SynthContext, random.Random], list[dict]]


@dataclass(frozen=True)
class Plant:
    """One registered plant: its name, stage, what it plants, SPEC §, rules, and function."""

    name: str
    stage: str
    plants: str
    spec: str
    rules: tuple[str, ...]
    fn: PlantFn
    after: tuple[str, ...] = ()
    default: bool = True  # run when SynthOptions.plants is None (the demo's set)


PLANTS: dict[str, Plant] = {}


def plant(name: str, *, stage: str, plants: str, spec: str, rules: tuple[str, ...] = (),
          after: tuple[str, ...] = (), default: bool = True) -> Callable[[PlantFn], PlantFn]:
    """Register the decorated function as plant ``name`` (names are unique).

    A plant with ``default=False`` runs only when :class:`SynthOptions` names it.
    """
    if stage not in STAGES:
        raise ValueError(f"plant {name}: stage {stage!r} is not one of {STAGES}")

    def register(fn: PlantFn) -> PlantFn:
        if name in PLANTS:
            raise ValueError(f"plant {name} is registered twice")
        PLANTS[name] = Plant(name, stage, plants, spec, tuple(rules), fn, tuple(after),
                             default)
        return fn
    return register


def unregister(name: str) -> None:
    """Remove plant ``name`` (tests register and remove extra plants)."""
    PLANTS.pop(name, None)


def selected(options: SynthOptions) -> set[str]:
    """The names of the plants ``options`` asks for: its list, ``all``, or the default set.

    An unknown name is refused with the list of registered plants (``brainlab synth
    --plants``).
    """
    if options.plants is None:
        return {p.name for p in PLANTS.values() if p.default}
    if tuple(options.plants) == ("all",):
        return set(PLANTS)
    unknown = sorted(set(options.plants) - set(PLANTS))
    if unknown:
        from brainlab.common.errors import ConfigError

        raise ConfigError(f"--plants: no plant named {', '.join(unknown)}; the plants are "
                          f"{', '.join(sorted(PLANTS))} (or none, or all)")
    return set(options.plants)


def ordered(stage: str) -> list[Plant]:
    """The plants of ``stage`` in run order: by name, each after the plants of its ``after``."""
    pending = sorted((p for p in PLANTS.values() if p.stage == stage), key=lambda p: p.name)
    names = {p.name for p in pending}
    done: list[Plant] = []
    while pending:
        ready = next((p for p in pending if all(a in {d.name for d in done} or a not in names
                                                for a in p.after)), None)
        if ready is None:
            raise ValueError(f"plants {[p.name for p in pending]} wait on each other")
        done.append(ready)
        pending.remove(ready)
    return done


def run(stage: str, ctx: SynthContext) -> list[dict]:
    """Run the plants of ``stage``, each with its own stream; their manifest entries in order.

    Each entry is tagged with its plant's name, and ``ctx.counts`` records, per plant, how
    many entries and rule violations it planted (zero when it found nowhere to plant).
    """
    entries: list[dict] = []
    chosen = selected(ctx.options)
    for p in ordered(stage):
        if p.name not in chosen:
            continue
        planted = [{**e, "plant": p.name} for e in p.fn(ctx, ctx.stream(p.name)) if e]
        ctx.counts[p.name] = {"entries": len(planted), "violations": sum(
            len(e.get("violations", [])) for e in planted)}
        entries += planted
    return entries


def entry(effect: str, where: str, violations: list[tuple[str, str]], **extra) -> dict:
    """A manifest entry: the effect, where it is, and the (rule, subject) pairs it breaks."""
    return {"effect": effect, "where": where,
            "violations": [{"rule": r, "subject": s} for r, s in violations], **extra}
