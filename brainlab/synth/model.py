"""The synthetic brain's plan: sessions and options as plain data, drawn before any file is written.

Generators for each file format (synth/brain.py and the per-area modules) render this plan;
nothing here writes files.
"""

from __future__ import annotations

import csv
import math
import random
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from importlib import resources

from brainlab.spec.vocabulary import category_of

DEFAULT_END = date(2026, 11, 29)  # fixed so a seed always gives the same brain

# SPEC §2.2 calibration: session counts and mean durations (hours) on the author's instance;
# types the SPEC gives no figure for get small shares and short sessions.
TYPE_WEIGHTS: dict[str, float] = {
    # pilote: 59 sessions on the author's instance, but at 11.8 h each fewer fit in a week
    # of mixed work; halved so a normal week sits near the healthy ratio (>= 1.0).
    "work": 69, "pilote": 30, "explore": 32, "brain": 23, "debug": 8, "deploy": 5,
    "brainstorm": 6, "navigate": 5, "coach": 4, "kernel": 3, "edit-brain": 3, "chill": 2,
    "learning": 1,
    # use-brain types the SPEC lists without figures: small shares that keep the author's
    # measured balance near ratio 0.9 rather than on the 0.5 "watch" edge.
    "sprint": 10, "infra": 4, "urgence": 2, "review": 4,
}
MEAN_HOURS: dict[str, float] = {
    "work": 2.6, "brain": 1.9, "explore": 5.6, "pilote": 11.8, "chill": 1.0, "learning": 2.0,
}
BUILD_TYPES = ("brain", "pilote", "kernel", "edit-brain")
PROJECTS = ("originsdigital", "superoauth", "cipherbox")
WASTED_AGENT = "brain-hypervisor"  # planted: loaded in ~95% of sessions, never used
# the registered plants whose effect plan_sessions draws (synth/brain_plants.py describes them)
DRAWN_PLANTS = ("build-week", "wasted-agent")


@dataclass(frozen=True)
class SynthOptions:
    """What to generate: how much history, from which seed, ending when."""

    weeks: int = 12
    seed: int = 7
    end: date = DEFAULT_END
    sessions_per_day: float = 2.5
    build_heavy_week: int | None = None  # index from the start; default: the middle week
    # registered plants to run (synth/registry.py): None = every plant registered with
    # default=True (the demo's set); () = none; names may include default=False plants
    plants: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        """Refuse what the generator cannot draw (it plants effects in the last sessions)."""
        if self.weeks < 1:
            from brainlab.common.errors import ConfigError

            raise ConfigError(f"--weeks {self.weeks}: the synthetic history needs at least 1"
                              " week (the default is 12)")

    @classmethod
    def from_cli(cls, weeks: int, seed: int, end: str | None,
                 plants: str | None = None) -> SynthOptions:
        """Options from command-line values (``end`` YYYY-MM-DD; ``plants`` NAME,...|none|all).

        Unknown plant names are refused when the brain is made (registry.selected).
        """
        try:
            last = date.fromisoformat(end) if end else DEFAULT_END
        except ValueError:
            from brainlab.common.errors import ConfigError

            raise ConfigError(f"--end {end} is not a day: give it as YYYY-MM-DD, e.g."
                              " 2026-01-01") from None
        return cls(weeks=weeks, seed=seed, end=last, plants=plant_names(plants))

    @property
    def start(self) -> date:
        """First day of the history (a Monday-aligned count of whole weeks before ``end``)."""
        return self.end - timedelta(days=7 * self.weeks - 1)

    @property
    def planted_week(self) -> int:
        """Index of the build-brain-heavy week."""
        return self.build_heavy_week if self.build_heavy_week is not None else self.weeks // 2


@dataclass
class SynthSession:
    """One planned session: everything its metabolism log, claim and transcript need."""

    sess_id: str
    started_at: datetime
    type: str
    category: str
    mode: str
    project: str | None
    duration_min: int
    tokens_used: int
    context_peak_pct: int
    context_at_close: int
    commits: int
    todos_closed: int
    kernel_files_touched: int
    adrs_written: int
    insights_captured: int
    handoff_level: str
    cold_start_kpi_pass: bool | None
    agents_loaded: list[str] = field(default_factory=list)
    agents_used: list[str] = field(default_factory=list)
    notes: str = ""
    week: int = 0

    @property
    def ended_at(self) -> datetime:
        """When the session closed."""
        return self.started_at + timedelta(minutes=self.duration_min)


def plant_names(text: str | None) -> tuple[str, ...] | None:
    """``--plants`` as given: None (the default set), ``none`` -> (), ``all`` -> ("all",)."""
    if text is None or text.strip() == "":
        return None
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if names == ("none",):
        return ()
    return names


def agent_sizes() -> list[dict]:
    """The real agent sizes shipped with the package (reference/cortex-template snapshot)."""
    text = (resources.files("brainlab.data") / "agent_sizes.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    return [{"agent": r["path"].removeprefix("agents/").removesuffix(".md"),
             "bytes": int(r["bytes"]), "context_tier": r["context_tier"] or None} for r in rows]


def health_v2(s: SynthSession) -> float | None:
    """What the scribe would log: SPEC §3.2 v2 by category (None for chill)."""
    denominator = max(1.0, s.tokens_used / 1000 * s.context_peak_pct / 100)
    if s.category == "use-brain":
        return (s.todos_closed * 10 + s.commits * 5) / denominator
    if s.category == "build-brain":
        return (s.kernel_files_touched * 15 + s.adrs_written * 20) / denominator
    if s.category == "explore-brain":
        return (s.insights_captured * 8 + s.duration_min * 0.1) / denominator
    return None


def plan_sessions(options: SynthOptions, rng: random.Random,
                  boot_agents: dict[str, list[str]], domain_agents: list[str],
                  plants: frozenset[str] | set[str] = frozenset(DRAWN_PLANTS)
                  ) -> list[SynthSession]:
    """Draw every session of the history, the planted effects of ``plants`` included.

    Two plants are drawn here rather than changed afterwards: ``build-week`` (every
    session of :attr:`SynthOptions.planted_week` build-brain) and ``wasted-agent`` (an agent
    loaded in ~95% of sessions, never used); left out of ``plants``, that week is drawn
    like any other and the agent is never loaded. The stream's draws are the same either
    way but for the build week's own session kinds, so the rest of the history stays put.
    """
    sessions: list[SynthSession] = []
    types = list(TYPE_WEIGHTS)
    weights = [TYPE_WEIGHTS[t] for t in types]
    build_week = options.planted_week if "build-week" in plants else None
    wasted = "wasted-agent" in plants
    day = options.start
    while day <= options.end:
        week = (day - options.start).days // 7
        n = _poisson(rng, options.sessions_per_day)
        hours = sorted(rng.sample(range(7, 23), k=min(n, 16)))
        for hour in hours:
            if week == build_week:
                kind = rng.choice(BUILD_TYPES)
            else:
                kind = rng.choices(types, weights)[0]
            started = datetime.combine(day, time(hour, rng.randrange(0, 60)))
            sessions.append(_session(kind, started, week, rng, boot_agents, domain_agents,
                                     wasted))
        day += timedelta(days=1)
    return sessions


def _poisson(rng: random.Random, mean: float) -> int:
    limit, k, p = math.exp(-mean), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def _session(kind: str, started: datetime, week: int, rng: random.Random,
             boot_agents: dict[str, list[str]], domain_agents: list[str],
             wasted: bool = True) -> SynthSession:
    category = category_of(kind)
    mean_h = MEAN_HOURS.get(kind, 1.5)
    hours = min(20.0, max(0.2, rng.lognormvariate(math.log(mean_h) - 0.18, 0.6)))
    duration = int(round(hours * 60))
    peak = int(min(97, max(12, rng.gauss(45 + 6 * math.log1p(hours), 17))))
    close = int(max(5, min(peak, peak - abs(rng.gauss(12, 10)))))
    tokens = int(min(195_000, max(8_000, rng.gauss(40_000 + 12_000 * math.log1p(hours), 20_000))))
    tokens = int(round(tokens / 1000) * 1000)
    # SPEC §3.1/§7: tokens_used is the context size at close (the spec's own example: 22% of
    # 200k ~ 45k), so the log and its transcript agree: close follows the drawn tokens (the
    # close drawn above only keeps the RNG stream), never above the peak.
    close = min(peak, max(5, round(tokens / 2_000)))
    tokens = close * 2_000
    commits = todos = kernel = adrs = insights = 0
    if category == "use-brain":
        commits, todos = _poisson(rng, 3.0), _poisson(rng, 2.0)
    elif category == "build-brain":
        kernel, adrs = _poisson(rng, 3.0), _poisson(rng, 0.6)
        commits = _poisson(rng, 2.0)
    elif category == "explore-brain":
        insights = _poisson(rng, 3.0)
    project = rng.choice(PROJECTS) if category == "use-brain" else None
    handoff = rng.choices(["NO", "SEMI", "SEMI+", "FULL"], [3, 2, 3, 2])[0]
    kpi = (rng.random() < 0.8) if handoff == "NO" else None
    loaded = list(boot_agents.get(kind, boot_agents.get("work", [])))
    extra = rng.sample(domain_agents, k=rng.randint(0, 3))
    used = [a for a in extra + loaded[1:2] if a != WASTED_AGENT]
    for agent in extra:
        if agent not in loaded:
            loaded.append(agent)
    if rng.random() < 0.95 and wasted and WASTED_AGENT not in loaded:
        loaded.append(WASTED_AGENT)
    slug = f"{kind}-{project}" if project else kind
    sess_id = f"sess-{started:%Y%m%d-%H%M}-{slug}"
    notes = "; ".join(f"{a}: {rng.choice(_NOTE_VERBS)}" for a in used[:2]) or "quiet session"
    mode = {"brainstorm": "brainstorm", "debug": "debug", "coach": "coach"}.get(
        kind, rng.choices(["prod", "sprint", "conserve", "dev"], [6, 2, 1, 1])[0])
    return SynthSession(
        sess_id=sess_id, started_at=started, type=kind, category=category, mode=mode,
        project=project, duration_min=duration, tokens_used=tokens, context_peak_pct=peak,
        context_at_close=close, commits=commits, todos_closed=todos, kernel_files_touched=kernel,
        adrs_written=adrs, insights_captured=insights, handoff_level=handoff,
        cold_start_kpi_pass=kpi, agents_loaded=loaded, agents_used=used, notes=notes, week=week,
    )


_NOTE_VERBS = ("traced the failing test", "reviewed the auth routes", "split the migration",
               "drafted the ADR", "cleaned the todo list", "checked the deploy config",
               "proposed a refactor", "summarised the sprint")
