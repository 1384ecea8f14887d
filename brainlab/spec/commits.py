"""SPEC §3.1/§3.2 ``commits``: what counts as one git commit of a session, written once.

A commit is a ``Bash`` tool call whose command runs ``git commit`` (``git -C dir commit``,
``git -c k=v commit``, ``cd x && git commit ...``; not ``git log --grep commit``). The rule
reads words, not shell syntax: a quoted ``"... git commit"`` and ``git commit-tree`` count.
The transcript ingest marks each such call (``is_git_commit`` of ``cc_tool_call_lines``,
which ``cc_measured`` and ``cc_sessions`` count, hence the session's measured ``commits``
that rules BUD001/BUD002 read) and the status line counts them in the session's own
transcript to colour its context against the mode's budget (:mod:`brainlab.spec.budget_rule`):
both call :func:`is_git_commit`.
"""

from __future__ import annotations

import re

COMMIT_TOOL = "Bash"  # the only tool whose calls run a shell command
# `git`, any of its global options, then the `commit` subcommand; *+: linear on long commands
GIT_COMMIT = re.compile(
    r"(?:^|[;&|(\s`])git\s+(?:(?:-C|-c)\s+\S+\s+|--?[\w-]+(?:=\S+)?\s+)*+commit\b")


def is_git_commit(tool: str | None, command: str | None) -> bool:
    """True when a tool call named ``tool`` running ``command`` is a git commit."""
    return tool == COMMIT_TOOL and bool(command) and GIT_COMMIT.search(command) is not None
