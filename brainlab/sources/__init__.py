"""Input formats, one module each. :func:`brain_sources` lists those of a brain checkout.

The brain sources (and their YAML parser) are imported by :func:`brain_sources` when it is
called, and each is imported from its own module (``from brainlab.sources.claims import
ClaimsSource``): the transcript ingest imports this package for its own modules only, and a
small incremental run must not pay 30 ms for parsers it never calls (issue 12).
"""

from __future__ import annotations

from pathlib import Path

from brainlab.sources.base import ErrorRow, Parsed, Source


def brain_sources() -> list[Source]:
    """The sources ``brainlab ingest brain`` runs, in load order."""
    from brainlab.sources.agents import AgentsSource
    from brainlab.sources.circuits import BrainCircuitsSource
    from brainlab.sources.claims import ClaimsSource
    from brainlab.sources.contexts import ContextsSource
    from brainlab.sources.focus import FocusSource
    from brainlab.sources.handoffs import HandoffsSource
    from brainlab.sources.metabolism import MetabolismSource
    from brainlab.sources.sprints import sprint_sources
    from brainlab.sources.workspaces import WorkspacesSource

    return [MetabolismSource(), AgentsSource(), ContextsSource(), ClaimsSource(),
            HandoffsSource(), WorkspacesSource(), BrainCircuitsSource(), *sprint_sources(),
            FocusSource()]


# Where ``brainlab ingest brain`` looks, relative to the folder given (said when it finds nothing).
BRAIN_PLACES = ("progression/metabolism/*.md", "metabolism/*.md", "agents/*.md",
                "contexts/session-*.yml", "claims/*.yml", "handoffs/*.md", "workspace/*/**",
                "circuits/**/*.jsonl", "projets/*.md", "progression/sprints/*.jsonl",
                "focus.md")


def find_brains(root: Path, depth: int = 2, limit: int = 200) -> list[Path]:
    """Folders below ``root`` (``depth`` levels, ``limit`` folders at most) holding brain files."""
    found, frontier, seen = [], [Path(root)], 0
    for _level in range(depth):
        below = []
        for folder in frontier:
            try:
                children = sorted(p for p in folder.iterdir()
                                  if p.is_dir() and not p.name.startswith("."))
            except OSError:
                continue
            for child in children:
                seen += 1
                if seen > limit:
                    return found
                if any(s.discover(child) for s in brain_sources()):
                    found.append(child)
                else:
                    below.append(child)
        frontier = below
    return found


def no_brain_message(root: Path) -> str:
    """Say that ``root`` holds nothing brain-like, where brainlab looked, and brains below it."""
    below = find_brains(root)
    hint = (" Brains found below it: " + ", ".join(str(p) for p in below[:5])
            + (" ..." if len(below) > 5 else "") + "." if below else "")
    return (f"nothing brain-like in {root}: looked for " + ", ".join(BRAIN_PLACES)
            + f"; nothing was written.{hint} Give the brain's own folder"
            " (the checkout that holds agents/, claims/, progression/metabolism/).")


__all__ = ["ErrorRow", "Parsed", "Source", "brain_sources"]
