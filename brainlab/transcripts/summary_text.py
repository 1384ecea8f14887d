"""What an ``ingest claude`` run did, as the lines ``brainlab ingest claude`` prints.

Beside :class:`~brainlab.transcripts.plan.ClaudeSummary` (the counts) so the command only
prints: the read/unchanged/removed line, the files kept or pruned or found again, unfinished
files, models without a price, and what to do when no transcript was found. The problems
line and the store's path follow from :mod:`brainlab.store.ingest_text`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from brainlab.common.plaintext import visible

if TYPE_CHECKING:
    from collections.abc import Sequence

    from brainlab.transcripts.plan import ClaudeSummary

WARNING = "yellow"  # the style of a line that asks for the user's attention


def summary_lines(summary: ClaudeSummary, root: Path | Sequence[Path]
                  ) -> list[tuple[str, str | None]]:
    """``(line, style)`` each: what the run did; style ``WARNING`` or None (plain)."""
    lines: list[tuple[str, str | None]] = [(
        f"claude {summary.read} read, {summary.unchanged} unchanged, {summary.removed}"
        f" removed, {summary.bytes_read / 1e6:.1f} MB, {summary.rows:,} rows,"
        f" {summary.errors} errors, {summary.warnings} warnings", None)]
    if summary.gone_kept:
        lines.append((f"{summary.gone_kept} file(s) gone from disk, their rows kept"
                      f" ({summary.gone} new this run; --prune removes them)", None))
    if summary.removed:
        lines.append((f"pruned: the rows of {summary.removed} gone file(s) removed"
                      f" ({summary.removed_rows:,} rows)", None))
    if summary.returned:
        lines.append((f"{summary.returned} gone file(s) found again (not counted twice)", None))
    if summary.pending_files:
        lines.append((f"{summary.pending_files} file(s) end in an unfinished line, read next"
                      " run", None))
    if summary.unpriced_models:  # names come from data: printed as plain text
        lines.append(("no price for model(s): " + ", ".join(map(visible, summary.unpriced_models))
                      + " (cost_usd NULL; add them with --prices FILE)", WARNING))
    if not (summary.read or summary.unchanged or summary.removed or summary.gone_kept):
        shown = root if isinstance(root, Path) else ", ".join(map(str, root))
        lines.append((f"No transcript (*.jsonl) under {shown}: Claude Code writes them as"
                      " <projects>/<project>/<session>.jsonl; give that projects folder"
                      " (default: each $CLAUDE_CONFIG_DIR folder's projects/, else"
                      " ~/.config/claude/projects and ~/.claude/projects).", None))
    return lines
