"""Synthetic sprints: project contracts, broker output blocks and a JSONL sprint record.

Writes, under the brain folder:

- ``projets/originsdigital.md`` (a SPEC §4.1 contract); project ``side-tool`` has sprints but
  no contract file (replays label its inferred contract);
- ``progression/broker/YYYY-MM-DD-<sprint>.md``: the broker's inhale and expire blocks in the
  format of seeds/context-broker.md.txt (what a broker following SPEC §4.2/§4.3 printed);
- ``progression/sprints/sprints.jsonl``: one line per sprint and agent (docs/broker.md).

Planted effect: in domain ``billing`` every agent needs the same four files, so ``protocol``
(at most 2 sources) misses there and ``history`` (k=4) does not after the first sprint.
:func:`sprint_plan` gives the same sprints as dicts so transcripts can render them as tool calls.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, time, timedelta
from pathlib import Path

from brainlab.synth.files import BrainFiles

PROJECT = "originsdigital"
UNCONTRACTED = "side-tool"
PLANTED_DOMAIN = "billing"
CONTRACT: dict[str, list[str]] = {
    "auth": ["auth.middleware.ts", "auth.routes.ts"],
    "video": ["video.routes.ts", "Video.ts"],
    "admin": ["admin.routes.ts", "admin.middleware.ts"],
    "stream": ["stream.routes.ts"],
    "playlist": ["playlist.routes.ts", "Playlist.ts"],
    PLANTED_DOMAIN: ["billing.routes.ts", "billing.service.ts", "Invoice.ts",
                     "billing.middleware.ts"],
}
SIDE_LAYOUT: dict[str, list[str]] = {
    "cli": ["src/cli/main.py", "src/cli/args.py"],
    "core": ["src/core/engine.py", "src/core/store.py", "src/core/model.py"],
}
ROLES = ("developer", "testwriter", "reviewer")
REPO = f"/home/dev/projects/{PROJECT}"
SIDE_REPO = f"/home/dev/projects/{UNCONTRACTED}"


def _repo_path(domain: str, name: str) -> str:
    return f"src/{domain}/{name}"


def sprint_plan(rng: random.Random, start: datetime, end: datetime,
                sessions: list | None = None) -> list[dict]:
    """The sprints between ``start`` and ``end`` as dicts (see docs/broker.md, "synthetic").

    Each dict: sprint, project, domain, session, started_at, ended_at, repo, files {path:
    bytes}, agents [{agent, domain, referenced [{path, kind}], touched, open_todos, loaded}],
    released, kept, reason. Paths are repo-relative (``src/<domain>/<file>``).
    """
    sizes = {_repo_path(d, f): rng.randrange(1_000, 12_000) // 4 * 4
             for d, files in CONTRACT.items() for f in files}
    sizes |= {p: rng.randrange(1_000, 9_000) // 4 * 4 for files in SIDE_LAYOUT.values()
              for p in files}
    slots = _slots(rng, start, end, sessions)
    plan, counter = [], {}
    for index, (when, session) in enumerate(slots):
        if index % 4 == 3:
            project, domain = UNCONTRACTED, rng.choice(sorted(SIDE_LAYOUT))
        elif index % 4 == 1 or (index < 8 and index % 2):
            project, domain = PROJECT, PLANTED_DOMAIN
        else:
            project, domain = PROJECT, rng.choice(sorted(set(CONTRACT) - {PLANTED_DOMAIN}))
        counter[(project, domain)] = counter.get((project, domain), 0) + 1
        name = f"{project}-{domain}-{counter[(project, domain)]:02d}"
        sprint = _sprint(rng, name, project, domain, when, session, sizes)
        plan.append(sprint)
    return plan


def _slots(rng, start, end, sessions) -> list[tuple[datetime, str]]:
    work = [s for s in sessions or [] if getattr(s, "type", None) in
            ("work", "sprint", "debug", "deploy") and start <= s.started_at <= end]
    if len(work) >= 8:
        return [(s.started_at + timedelta(minutes=20), s.sess_id) for s in work]
    slots, day = [], start.date()
    while day <= end.date():
        if day.weekday() in (0, 2, 4):
            when = datetime.combine(day, time(rng.choice((9, 10, 14, 15)), 0))
            slots.append((when, f"sess-{when:%Y%m%d-%H%M}-sprint"))
        day += timedelta(days=1)
    return slots


def _sprint(rng, name, project, domain, when, session, sizes) -> dict:
    if project == PROJECT:
        files = [_repo_path(domain, f) for f in CONTRACT[domain]]
    else:
        files = list(SIDE_LAYOUT[domain])
    roles = ["developer", "testwriter"] + (["reviewer"] if rng.random() < 0.6 else [])
    open_todo = rng.random() < 0.3
    agents = []
    if domain == PLANTED_DOMAIN:
        needed = files  # the planted effect: all four, every time
    else:
        needed = rng.sample(files, k=min(len(files), rng.choice((1, 2))))
    for role in roles:
        if role == "developer":
            touched = list(needed)
            refs = [{"path": p, "kind": "edit"} for p in touched]
        elif role == "testwriter" and domain == PLANTED_DOMAIN:
            touched = list(needed)  # the planted domain: tests live beside the four files
            refs = [{"path": p, "kind": "edit"} for p in needed]
        elif role == "testwriter":
            touched = [f"tests/{domain}.test.ts"]
            refs = [{"path": p, "kind": "read"} for p in needed] + \
                [{"path": touched[0], "kind": "write"}]
        else:
            touched = []
            refs = [{"path": p, "kind": "read"} for p in needed[:2]] + \
                [{"path": needed[0], "kind": "search"}]
        contract_touched = [p for p in touched if p in files]
        loaded = contract_touched[:2] if project == PROJECT else []  # no contract, no routing
        if project == PROJECT and rng.random() < 0.15:  # the broker sometimes loads "just in case"
            extra = [p for p in files if p not in loaded]
            if extra:
                loaded.append(extra[0])
        agents.append({
            "agent": role, "domain": domain, "referenced": refs, "touched": touched,
            "open_todos": [domain] if open_todo and role == "developer" else [],
            "loaded": loaded,
        })
    referenced = {r["path"] for a in agents for r in a["referenced"]}
    loaded_all = list(dict.fromkeys(p for a in agents for p in a["loaded"]))
    kept = [p for p in loaded_all if open_todo and p in referenced]
    released = [p for p in loaded_all if p not in kept]
    minutes = rng.randrange(40, 150)
    return {
        "sprint": name, "project": project, "domain": domain, "session": session,
        "started_at": when, "ended_at": when + timedelta(minutes=minutes),
        "repo": REPO if project == PROJECT else SIDE_REPO,
        "files": {p: sizes[p] for p in files} | {f"tests/{domain}.test.ts": 2_000},
        "agents": agents, "released": released, "kept": kept,
        "reason": f"{domain} — TODO encore ouverte" if kept else None,
    }


def sprint_records(plan: list[dict]) -> list[dict]:
    """The JSONL lines (one per sprint and agent) of a plan."""
    lines = []
    for sprint in plan:
        for agent in sprint["agents"]:
            lines.append({
                "sprint": sprint["sprint"], "project": sprint["project"],
                "domain": agent["domain"], "agent": agent["agent"],
                "session": sprint["session"],
                "started_at": sprint["started_at"].isoformat(timespec="minutes"),
                "ended_at": sprint["ended_at"].isoformat(timespec="minutes"),
                "referenced": agent["referenced"], "touched": agent["touched"],
                "open_todos": agent["open_todos"], "bytes": sprint["files"],
            })
    return lines


def broker_text(sprint: dict) -> str:
    """The inhale and expire blocks the broker printed for ``sprint``."""
    return "\n".join([f"# Context broker — {sprint['sprint']}", "", inhale_text(sprint),
                      "", expire_text(sprint), ""])


def inhale_text(sprint: dict) -> str:
    """The inhale block (SPEC §4.2) of ``sprint``, ending with the hand-off line."""
    contract = sprint["project"] == PROJECT
    lines = [f"Context-broker — inhale sprint {sprint['sprint']}", "",
             f"Projet détecté : {sprint['project']}", "Mode           : sprint", "",
             "Source map :"]
    for agent in sprint["agents"]:
        names = [_name(p, contract) for p in agent["loaded"]]
        note = "   ← contexte boot suffisant" if not names else ""
        lines.append(f"  {agent['agent']} → {json.dumps(names, ensure_ascii=False)}{note}")
    if contract:  # seed "Exclusions explicites": a tempting file of the next domain
        domains = sorted(CONTRACT)
        other = domains[(domains.index(sprint["domain"]) + 1) % len(domains)]
        lines += ["", "Exclusions explicites :",
                  f'  "{CONTRACT[other][0]}" — tentant mais hors domaine sprint']
    lines += ["", "→ Passer à tech-lead gate."]
    return "\n".join(lines)


def expire_text(sprint: dict) -> str:
    """The expire block (SPEC §4.3, §4.4) of ``sprint``, ending with the signal line."""
    contract = sprint["project"] == PROJECT
    lines = [f"Context-broker — expire sprint {sprint['sprint']}", "", "Release map :"]
    released = [_name(p, contract) for p in sprint["released"]]
    kept = [_name(p, contract) for p in sprint["kept"]]
    lines.append(f"  LIBÉRER : {json.dumps(released, ensure_ascii=False)}")
    garder = f"  GARDER  : {json.dumps(kept, ensure_ascii=False)}"
    lines.append(garder + (f" — {sprint['reason']}" if sprint["reason"] else ""))
    loaded = len(released) + len(kept)
    referenced = {r["path"] for a in sprint["agents"] for r in a["referenced"]}
    stale = sum(1 for p in sprint["released"] + sprint["kept"] if p not in referenced)
    lines += ["", "Breath metrics :",
              f"  context_load : {loaded / max(len(referenced), 1):.1f}",
              f"  stale_ratio  : {100 * stale / loaded if loaded else 0:.0f}%",
              f"  breath_depth : +{len(kept)}",
              f"  exhale_rate  : {100 * len(released) / loaded if loaded else 0:.0f}%", "",
              "→ Signal metabolism-scribe si seuil atteint."]
    return "\n".join(lines)


def _name(path: str, contract: bool) -> str:
    """Contract projects name files as the contract does (basename); others by repo path."""
    return path.rsplit("/", 1)[-1] if contract else path


def contract_text() -> str:
    """``projets/originsdigital.md`` with its SPEC §4.1 contract."""
    width = max(len(d) for d in CONTRACT)
    domains = "\n".join(f"    {d:<{width}} : {json.dumps(files)}"
                        for d, files in CONTRACT.items())
    return (f"# Origins Digital\n\n## État courant\n\n- prod live\n\n## Contrat\n\n"
            f"```yaml\nprojet:\n  id       : \"{PROJECT}\"\n"
            f"  fichier  : brain/projets/{PROJECT}.md\n"
            f"  repo     : <PATHS.projects>/{PROJECT}\n  domaines :\n{domains}\n```\n")


def plan_for(sessions: list, rng: random.Random, start: datetime | None = None,
             end: datetime | None = None) -> list[dict]:
    """The plan :func:`write_sprints` writes for these sessions and RNG (same draws, same plan)."""
    times = [s.started_at for s in sessions or []]
    end = end or (max(times) if times else datetime(2026, 3, 27, 18, 0))
    start = start or (min(times) if times else end - timedelta(weeks=12))
    return sprint_plan(rng, start, end, sessions)


def broker_path(sprint: dict) -> str:
    """Where the broker's blocks of ``sprint`` live."""
    return f"progression/broker/{sprint['started_at']:%Y-%m-%d}-{sprint['sprint']}.md"


def sprint_files(files: BrainFiles, plan: list[dict]) -> list[dict]:
    """Contracts, broker blocks and the sprint record of ``plan``; the planted effects."""
    files.put(f"projets/{PROJECT}.md", contract_text())
    for sprint in plan:
        if sprint["project"] != PROJECT:
            continue  # SPEC §4.1: without a contract the broker refuses to route
        files.put(broker_path(sprint), broker_text(sprint))
    files.put_jsonl("progression/sprints/sprints.jsonl", sprint_records(plan), compact=False)
    billing = [s["sprint"] for s in plan if s["domain"] == PLANTED_DOMAIN]
    return [
        {"effect": "broker domain needing four files",
         "where": f"project {PROJECT}, domain {PLANTED_DOMAIN} ({len(billing)} sprints): every "
                  "agent references the same 4 files; protocol (max 2 sources) misses there, "
                  "history (k=4) misses nothing after the first sprint",
         "sprints": billing},
        {"effect": "project without a contract",
         "where": f"project {UNCONTRACTED}: replays use a contract inferred from its "
                  "directory layout, labelled inferred",
         "sprints": [s["sprint"] for s in plan if s["project"] == UNCONTRACTED]},
    ]


def write_sprints(out_dir: Path, sessions: list, rng: random.Random,
                  start: datetime | None = None, end: datetime | None = None) -> list[dict]:
    """Write contracts, broker blocks and the sprint record; return planted-effect descriptions."""
    files = BrainFiles()
    planted = sprint_files(files, plan_for(sessions, rng, start, end))
    files.write(Path(out_dir))
    return planted
