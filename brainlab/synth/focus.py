"""The focus file (helloWorld) and the sprints only it names (seed context-broker lines 56-61).

The seed detects a sprint's project from three signals; the third is "helloWorld a identifié
un projet actif au boot — focus.md". :func:`focus_files` writes the brain's ``focus.md`` in
the template's shape (free text, current state only), dated by its modification time to the
end of the history's last session (the scribe updates it at a session's end), and then a few
multi-agent sprints run from the brain's own folder (``/home/user/brain``: no project
repository as working directory, no broker block, a UUID session id: no claim slug), on the
project the focus names. The replay can only learn their project from the focus
(``simulate broker``: ``project_signals``). It draws from its own stream and runs after
every other writer, telemetry included, so no other synthetic file changes.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from brainlab.synth.files import BrainFiles
from brainlab.synth.sprint_transcripts import sprint_session
from brainlab.synth.sprints import CONTRACT, PLANTED_DOMAIN, PROJECT, ROLES
from brainlab.synth.transcripts import put_session

FOCUS = "focus.md"
BRAIN_FOLDER = "/home/user/brain"  # the synthetic brain sessions' working directory
FOCUS_SPRINTS = 3
NOT_A_REPO = "(brain folder)"  # the sprint dict's project: no contract routing, no blocks


def focus_text(project: str) -> str:
    """The focus as helloWorld reads it: the template's heading and note, one active project."""
    return ("# Focus\n\n"
            "> Direction actuelle du brain. Mis a jour par le scribe en fin de session.\n\n"
            f"## Projet actif : {project}\n\n"
            "- auth : durcir le middleware avant la mise en production\n"
            "- video : pagination des routes a tester\n\n"
            "⚠️ revue de securite en attente\n")


WRITTEN_AFTER = timedelta(minutes=2)  # the scribe writes the focus after the last session
FIRST_AFTER = timedelta(minutes=5)  # the first focus sprint starts after the file is written
SPRINT_MINUTES = (8, 14)  # each focus sprint's length, drawn in this range
GAP_MINUTES = 3  # between two focus sprints
# the longest the block can take from the file's writing to its last sprint's end
BLOCK = FIRST_AFTER + FOCUS_SPRINTS * timedelta(minutes=SPRINT_MINUTES[1] + GAP_MINUTES)


def focus_files(files: BrainFiles, last_end: datetime, last_session: datetime,
                rng: random.Random) -> list[dict]:
    """``focus.md`` dated ``last_end`` and the sprints after it; return the manifest entry.

    The block stays in the week the history's last brain session started in
    (``last_session``, UTC, Monday weeks: a session's week is its start's): where that week
    ends within the hour, or a session or a project sprint ran on into the next week, the
    focus is written earlier that evening, never in a week of its own holding only these
    three sprints (the one the reports would call the latest). A sprint that started after
    it without a signal of its own (a repository, a claim slug) is then decided by the focus
    too, as it would be in a real brain; on the demo (seed 7) nothing starts after it.
    """
    monday = datetime.combine(last_session.date() - timedelta(days=last_session.weekday()),
                              datetime.min.time(), tzinfo=last_session.tzinfo)
    written = min(last_end + WRITTEN_AFTER, monday + timedelta(days=7) - BLOCK)
    files.put(FOCUS, focus_text(PROJECT))
    files.touch(FOCUS, written)
    domains = sorted(set(CONTRACT) - {PLANTED_DOMAIN})
    sessions = []
    at = written + FIRST_AFTER
    for k in range(FOCUS_SPRINTS):
        minutes = rng.randint(*SPRINT_MINUTES)
        chosen = rng.sample(domains, 2)
        agents, sizes = [], {}
        for role, domain in zip(ROLES, chosen, strict=False):
            paths = [f"src/{domain}/{f}" for f in CONTRACT[domain]]  # as the sprints name them
            sizes |= {p: rng.randrange(1_000, 12_000) // 4 * 4 for p in paths}
            agents.append({"agent": role, "domain": domain,
                           "referenced": [{"path": p, "kind": "read"} for p in paths]})
        sprint = {"sprint": f"focus-{k + 1:02d}", "project": NOT_A_REPO, "domain": chosen[0],
                  "started_at": at, "ended_at": at + timedelta(minutes=minutes),
                  "repo": BRAIN_FOLDER, "files": sizes, "agents": agents}
        writer = sprint_session(sprint, rng)
        put_session(files, writer)
        sessions.append(writer.id)
        at += timedelta(minutes=minutes + GAP_MINUTES)
    return [{
        "effect": "focus: helloWorld's focus.md names the project of sprints no other signal"
                  " names",
        "where": f"{FOCUS} (project {PROJECT}, modified {written:%Y-%m-%d %H:%M} UTC) and "
                 f"{FOCUS_SPRINTS} multi-agent sessions run from {BRAIN_FOLDER} after it, with"
                 " no broker block: simulate broker decides their project by the focus",
        "project": PROJECT, "modified_at": written.isoformat(timespec="minutes"),
        "transcript_sessions": sessions,  # extra sessions beside the planned ones
    }]
