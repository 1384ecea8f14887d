"""Input formats, one module each. :func:`brain_sources` lists those of a brain checkout."""

from __future__ import annotations

from brainlab.sources.agents import AgentsSource
from brainlab.sources.base import ErrorRow, Parsed, Source
from brainlab.sources.circuits import CircuitsSource
from brainlab.sources.claims import ClaimsSource
from brainlab.sources.contexts import ContextsSource
from brainlab.sources.files import list_files
from brainlab.sources.handoffs import HandoffsSource
from brainlab.sources.metabolism import MetabolismSource
from brainlab.sources.workspaces import WorkspacesSource


def brain_sources() -> list[Source]:
    """The sources ``brainlab ingest brain`` runs, in load order."""
    from brainlab.sources.sprints import sprint_sources

    return [MetabolismSource(), AgentsSource(), ContextsSource(), ClaimsSource(),
            HandoffsSource(), WorkspacesSource(), BrainCircuitsSource(), *sprint_sources()]


class BrainCircuitsSource(CircuitsSource):
    """Circuit journals inside a brain checkout: only ``circuits/`` (never other JSONL files)."""

    def discover(self, root):
        """``circuits/**/*.jsonl`` under the brain, nothing when the folder is absent."""
        return list_files(root / "circuits", "*.jsonl", recursive=True)


__all__ = ["ErrorRow", "Parsed", "Source", "brain_sources"]
