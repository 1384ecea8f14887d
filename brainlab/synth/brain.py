"""Render the planned sessions as a brain checkout, in the protocol's real file formats.

Formats follow SPEC §2-§5 and the reference template: metabolism logs in every variant the
SPEC lists (so the parser is exercised by the demo), claims in both key styles, session
contexts, agent definitions with their real byte sizes, handoffs and sprint workspaces.
"""

from __future__ import annotations

import random
from datetime import timedelta

from brainlab.spec.session_types import PROJECT_LAYER_TYPES
from brainlab.spec.thresholds import CONTEXT_WINDOW_TOKENS
from brainlab.synth.files import BrainFiles
from brainlab.synth.model import (
    PROJECTS,
    SynthOptions,
    SynthSession,
    agent_sizes,
    health_v2,
)

XSS_NOTE = '<script>alert("xss-note")</script> <img src=x onerror=alert("xss-img")>'

BOOT_AGENTS: dict[str, list[str]] = {
    "work": ["coach-boot", "debug"], "debug": ["coach-boot", "debug"],
    "deploy": ["coach-boot", "vps"], "pilote": ["coach", "helloWorld", "secrets-guardian"],
    "brain": ["helloWorld", "scribe"], "kernel": ["helloWorld", "kernel-orchestrator"],
    "edit-brain": ["helloWorld", "scribe"], "explore": ["helloWorld", "pathfinder"],
    "brainstorm": ["brainstorm"], "navigate": ["helloWorld"], "coach": ["coach"],
    "chill": ["helloWorld"], "learning": ["mentor"],
}
DOMAIN_AGENTS = ["testing", "refacto", "security", "code-review", "frontend-stack", "migration",
                 "database-architect", "ci-cd", "monitoring", "i18n", "tech-lead", "doc"]


def write_agents(w: BrainFiles) -> None:
    """agents/<name>.md at the real sizes of agent_sizes.csv, with a context_tier frontmatter."""
    for agent in agent_sizes():
        head = (f"---\nname: {agent['agent']}\ntype: agent\n"
                + (f"context_tier: {agent['context_tier']}\n" if agent["context_tier"] else "")
                + f"status: active\n---\n\n# Agent : {agent['agent']}\n\n")
        filler_line = "> Synthetic body sized like the real agent definition.\n"
        body = head
        while len(body.encode()) + len(filler_line) <= agent["bytes"]:
            body += filler_line
        body += "x" * (agent["bytes"] - len(body.encode()) - 1) + "\n" if \
            agent["bytes"] > len(body.encode()) else ""
        w.put(f"agents/{agent['agent']}.md", body)


def write_contexts(w: BrainFiles) -> None:
    """contexts/session-<type>.yml with L0/L1/L2 layers and context targets (SPEC §2.3)."""
    targets = {"work": 28, "brain": 22, "explore": 18, "pilote": 35}
    for kind, agents in BOOT_AGENTS.items():
        l1 = "\n".join(f"  - agents/{a}.md" for a in agents)
        l2 = ('L2:\n  template: "projets/{project}.md"\n  extras:\n    - "todo/{project}.md"\n'
              if kind in PROJECT_LAYER_TYPES else "L2: []\n")
        total = targets.get(kind, 20)
        w.put(f"contexts/session-{kind}.yml", (
            f"# session-{kind}.yml — synthetic\nsession_type: {kind}\n"
            f'description: "Synthetic {kind} session"\nttl_hours: 4\n'
            "L0:\n  - PATHS.md\n  - KERNEL.md\nL1:\n  - now.md\n  - focus.md\n"
            f"{l1}\n{l2}context_target:\n  L0: \"~5%\"\n  L1: \"~{total - 13}%\"\n"
            f"  L2: \"~8%\"\n  total_boot: \"~{total}%\"\n"))


def _value(v, bold: bool = False) -> str:
    text = str(v)
    return f"**{text}**" if bold else text


def metabolism_log(s: SynthSession, variant: str, rng: random.Random) -> str:
    """One SPEC §3.1 log. variant: 'v2' (template), 'v1' (no handoff/kpi rows), 'kv' (spec style)."""
    health = health_v2(s)
    health_text = "<insuffisant>" if health is None else f"{health:.2f}"
    kpi = "N/A" if s.cold_start_kpi_pass is None else str(s.cold_start_kpi_pass).lower()
    close = "<non mesuré>" if rng.random() < 0.02 else f"{s.context_at_close}%"
    saturation = s.context_peak_pct > 80 and s.todos_closed == 0 and s.category == "use-brain"
    fields = [
        ("type", s.category if rng.random() < 0.3 else s.type), ("mode", s.mode),
        ("tokens_used", f"{s.tokens_used // 1000}k"), ("context_peak", f"{s.context_peak_pct}%"),
        ("context_at_close", close), ("duration_min", s.duration_min), ("commits", s.commits),
        ("todos_closed", s.todos_closed), ("saturation_flag", str(saturation).lower()),
    ]
    if variant != "v1":
        fields += [("handoff_level", s.handoff_level), ("cold_start_kpi_pass", kpi)]
    if s.project:
        fields.append(("project", s.project))
    if s.category == "build-brain":
        fields += [("kernel_files_touched", s.kernel_files_touched),
                   ("adrs_written", s.adrs_written)]
    if s.category == "explore-brain":
        fields.append(("insights_captured", s.insights_captured))
    sizes = {a["agent"]: a["bytes"] // 4 for a in agent_sizes()}
    lines = [f"# Metabolism — {s.started_at:%Y-%m-%d} — {s.sess_id}", ""]
    if variant == "kv":
        lines += [f"session_id            : {s.sess_id}", f"date                  : "
                  f"{s.started_at:%Y-%m-%d}"]
        lines += [f"{k:<22}: {v}" for k, v in fields]
        lines.append(f"{'health_score':<22}: {health_text}")
        lines.append("agents_loaded:")
        lines += [f"  - {a:<20} : ~{sizes.get(a, 2000) / 1000:.1f}k tokens"
                  for a in s.agents_loaded]
        total = sum(sizes.get(a, 2000) for a in s.agents_loaded)
        lines.append(f"total_context_agents     : ~{total / 1000:.0f}k tokens")
    else:
        bold_keys = rng.random() < 0.3
        lines += ["| Clé | Valeur |", "|-----|--------|"]
        lines += [f"| {_value(k, bold_keys)} | {v} |" for k, v in fields]
        lines.append(f"| **health_score** | **{health_text}** |")
        lines += ["", "## Agents chargés", "", "| Agent | Tokens estimés |",
                  "|-------|---------------|"]
        lines += [f"| {a} | ~{sizes.get(a, 2000) / 1000:.1f}k |" for a in s.agents_loaded]
        total = sum(sizes.get(a, 2000) for a in s.agents_loaded)
        share = total * 100 // CONTEXT_WINDOW_TOKENS
        lines.append(f"| total | ~{total / 1000:.0f}k tokens ({share}% budget) |")
    signals = []
    if saturation:
        signals.append("saturation_flag: peak > 80% with no todo closed")
    if s.context_at_close > 60:
        signals.append("context_at_close > 60%: conserve recommended next session")
    lines += ["", "## Signaux", ""] + [f"- {x}" for x in signals]
    lines += ["", "## Notes", "", s.notes, ""]
    return "\n".join(lines)


def write_metabolism(w: BrainFiles, sessions: list[SynthSession], options: SynthOptions,
                     rng: random.Random, skip: set[str] | None = None) -> None:
    """Per-session logs (SPEC §3.1) plus the README index.

    ``skip``: sessions that wrote no log (drawn all the same, so the stream is unchanged).
    """
    v1_until = options.weeks // 4
    rows = []
    for s in sessions:
        if s.week < v1_until:
            variant = "v1"
        else:
            variant = "kv" if rng.random() < 0.1 else "v2"
        text = metabolism_log(s, variant, rng)
        if skip and s.sess_id in skip:
            continue
        w.put(log_path(s), text)
        health = health_v2(s)
        rows.append(f"| {s.started_at:%Y-%m-%d} | {s.sess_id} | {s.category} | {s.mode} | "
                    f"{'<insuffisant>' if health is None else f'{health:.2f}'} | "
                    f"{s.handoff_level} | "
                    f"{'N/A' if s.cold_start_kpi_pass is None else str(s.cold_start_kpi_pass).lower()}"
                    " | — |")
    w.put("progression/metabolism/README.md", "\n".join([
        "# progression/metabolism/ — Index", "",
        "| Date | Session | Type | Mode | health_score | handoff | kpi | Seuils |",
        "|------|---------|------|------|-------------|---------|-----|--------|", *rows, ""]))


def log_path(s: SynthSession) -> str:
    """Where the metabolism log of ``s`` lives."""
    return f"progression/metabolism/{s.started_at:%Y-%m-%d}-{s.sess_id}.md"


def claim_path(sess_id: str) -> str:
    """Where the claim of session ``sess_id`` lives."""
    return f"claims/{sess_id}.yml"


def write_claims(w: BrainFiles, sessions: list[SynthSession], options: SynthOptions) -> None:
    """One closed claim per session (SPEC §2.6), legacy keys in the first third."""
    legacy_until = options.weeks // 3
    for s in sessions:
        opened, closed = s.started_at, s.ended_at
        if s.week < legacy_until:
            text = (f"name: {s.sess_id}\ntype: {s.type}\nscope: brain/\nagent: helloWorld\n"
                    f'status: closed\nopened: "{opened:%Y-%m-%dT%H:%M}"\n'
                    f'closed: "{closed:%Y-%m-%dT%H:%M}"\n')
        else:
            text = (f"sess_id: {s.sess_id}\ntype: {s.type}\n"
                    f"scope: {'projets/' + s.project if s.project else 'brain/'}\n"
                    f"agent: helloWorld\nstatus: closed\n"
                    f'opened_at: "{opened:%Y-%m-%dT%H:%M}"\nclosed_at: "{closed:%Y-%m-%dT%H:%M}"\n'
                    f'handoff_level: "{s.handoff_level}"\nmode: {s.mode}\n')
        w.put(claim_path(s.sess_id), text)


def write_handoffs(w: BrainFiles, sessions: list[SynthSession]) -> None:
    """A handoff file with frontmatter for every FULL-handoff session."""
    for s in sessions:
        if s.handoff_level == "FULL":
            w.put(f"handoffs/{s.sess_id}.md", (
                f"---\nsess_id: {s.sess_id}\nhandoff_level: FULL\n"
                f"date: {s.started_at:%Y-%m-%d}\n---\n\n# Handoff — {s.sess_id}\n\n{s.notes}\n"))


def write_workspaces(w: BrainFiles, options: SynthOptions, rng: random.Random,
                     ram_lines: dict[str, int] | None = None) -> None:
    """A workspace per project sprint (SPEC §5; one per project and fortnight).

    ``ram_lines``: workspaces whose ram.md a plant sized (no draw for those).
    """
    ram_lines = ram_lines or {}
    for week in range(0, options.weeks, 2):
        day = options.start + timedelta(days=7 * week)
        for project in PROJECTS:
            name = workspace_name(project, week // 2 + 1)
            w.put(f"workspace/{name}/README.md", (
                f"# Workspace {name}\n\nprojet: {project}\nmode: prod\n\n## Lifecycle\n"
                f"ttl: 7d\narchive: {rng.choice(['auto', 'keep', '30d'])}\n"))
            lines = ram_lines[name] if name in ram_lines else rng.randint(5, 40)
            w.put(f"workspace/{name}/ram.md", "# RAM\n\n" + "".join(
                f"- state {i}: {rng.choice(['open', 'resolved', 'waiting'])}\n"
                for i in range(lines)))
            decisions = "".join(
                f"{day + timedelta(days=i):%Y-%m-%d} {10 + i}:00 | option A or B for step {i} |"
                f" choisi : {rng.choice('AB')} | raison : simpler at this scale\n"
                for i in range(rng.randint(2, 6)))
            w.put(f"workspace/{name}/log.md", decisions)
            w.put(f"workspace/{name}/feedback.md", "# Feedback\n\n- fine\n")


def workspace_name(project: str, sprint: int) -> str:
    """The workspace folder of a project's ``sprint``-th fortnight."""
    return f"{project}-sprint{sprint}"
