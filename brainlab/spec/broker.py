"""Where the context broker runs and what it never loads (seed context-broker, SPEC §2.3, §4).

Each fact once, with the seed line it comes from (``seeds/context-broker.md.txt``). The
replay (:mod:`brainlab.sim.broker_scope`) and the compliance rule BRK005 read these tuples.
"""

from __future__ import annotations

SEED = "seeds/context-broker.md.txt"

# SPEC §2.3 layer 0 (invariant): loaded at every boot, whatever the session type. The other
# layers come from contexts/session-<type>.yml (the store's context_files).
BOOT_LAYER0: tuple[str, ...] = ("KERNEL.md", "PATHS.md", "collaboration.md")
# A planned agent's own definition, in context since the agent was launched: agents/<name>.md.
AGENT_DEFINITION_DIR = "agents"
# The orchestrator's own chain in a transcript: it invokes the broker, it is not a planned agent.
ORCHESTRATOR_AGENT = "main"

# seed lines 32-37 and 246-247: "Non invoqué si : Mode coach, Mode toolkit-only, Mode audit,
# Session solo fichier unique". A session of one of these types or modes never runs the broker.
FORBIDDEN_MODES: tuple[str, ...] = ("coach", "toolkit-only", "audit")
# seed line 241: "Sprint multi-agents en mode use-brain / build-brain" (SPEC §2.2 categories).
BROKER_CATEGORIES: tuple[str, ...] = ("use-brain", "build-brain")
# SPEC §4.2 / seed line 221: more than this many sources for one agent escalates to tech-lead.
MAX_SOURCES = 2

# Why a sprint is not replayed, in the order the reasons are tried (the first that holds).
SKIP_REASONS: dict[str, str] = {
    "coach": f"a coach session or mode ({SEED}:34)",
    "toolkit-only": f"a toolkit-only session or mode ({SEED}:35)",
    "audit": f"an audit session or mode: the audit agent loads ({SEED}:36)",
    "not use-brain/build-brain": f"an explore-brain or chill session ({SEED}:241)",
    "no identified project": f"no project detected by any of the three signals ({SEED}:56-61)",
    "solo single-file": f"one agent on at most one file ({SEED}:37)",
    "single agent": f"one planned agent: not a multi-agent sprint ({SEED}:241)",
    "no declared contract": f"the project has no projets/<p>.md contract: no routing ({SEED}:76)",
    "declared contract": "the project has a declared contract (--contracts inferred)",
}

# seed lines 56-61 "Un projet est détecté si l'une des conditions suivantes est vraie": the
# signal that decided a sprint's project, in the order tried (the seed's table order; the
# broker's own printed detection first; a session in the brain's own folder that no signal
# decided keeps that folder, last).
PROJECT_SIGNALS: dict[str, str] = {
    "broker block": "the broker printed the project (Projet détecté)",
    "repo file": f"a repository of the request: a sprint record's project or a transcript's"
                 f" working directory, not the brain's own folder ({SEED}:59)",
    "claim slug": f"the BSI claim slug (session id) contains a known project ({SEED}:60)",
    "focus": f"helloWorld's focus.md names one known project and the session booted after it"
             f" was written ({SEED}:61)",
    "brain folder": "a session in the brain's own folder that no signal decided: that folder",
}
