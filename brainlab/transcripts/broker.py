"""Context-broker blocks inside Claude Code transcripts (SPEC §7 sprints, §4.2 / §4.3 formats).

The broker prints its inhale and expire blocks (seeds/context-broker.md.txt) as text: in an
assistant message of the chain that runs it, and again in the ``tool_result`` a parent chain
receives from a broker subagent. The row builder (:mod:`brainlab.transcripts.build`)
hands such texts here (assistant texts, and the tool results that are a subagent's answer:
:func:`subagent_answer`), but only those holding :data:`MARKER` (a substring test, so the
other texts cost one ``in``). Blocks become ``broker_blocks`` / ``broker_block_files`` rows carrying
the transcript line's session, agent and timestamp, so :mod:`brainlab.sim.transcript_sprints`
can cut sessions into sprints.

The text itself is never stored: only what the block format names (sprint name, project id,
mode, agent names, file paths, printed metrics, and the short GARDER / exclusion reasons), each
redacted and truncated. Error rows say what was wrong and where (file, transcript line, line of
the text), never the offending line's content. Blocks whose sprint name is a placeholder
(``<nom>``: the format template itself, as in the broker's own definition file) are ignored.
"""

from __future__ import annotations

import re

from brainlab.sources.broker_blocks import BrokerBlock, block_rows, find_blocks
from brainlab.sources.redact import redact_truncate

TABLES = ("broker_blocks", "broker_block_files")
# The header is "Context-broker — inhale sprint <nom>" (the seed's spelling; find_blocks also
# reads other cases): "roker" is in broker and Broker. One substring test per text, so an
# all-capitals "CONTEXT-BROKER" header is not looked for in transcripts (docs/broker.md).
MARKER = "roker"
_PLACEHOLDER = re.compile(r"^<[^>]*>$")
_TEMPLATE_ERROR = re.compile(r"block '<[^']*>'")
# find_blocks' line errors end with the offending text: keep the words before it.
_SAFE_REASON = re.compile(
    r"^(.*?(?:cannot read exclusion line|cannot read line|expected a \[\"file\", \.\.\.\] list"
    r"|unclosed file list|file list entries must be names|: not a number"
    r"|source map line without an arrow|unknown line))")
NAME_CHARS, PATH_CHARS, REASON_CHARS = 200, 500, 200


def marked(text: object) -> bool:
    """Whether ``text`` may hold a broker block (the cheap test before any parsing)."""
    return isinstance(text, str) and MARKER in text


def subagent_answer(line: dict) -> bool:
    """Whether a user line returns a subagent's answer (the Task/Agent tool's result).

    Only these tool results are scanned: that is how a broker run as a subagent prints to its
    parent. Other tool outputs (a file read, a command's output) may quote a recorded block,
    which is not the broker speaking at that time, and they are most of a transcript's bytes.
    Claude Code marks the answer with ``toolUseResult.agentId`` (recent versions) or
    ``totalDurationMs`` (all versions seen).
    """
    result = line.get("toolUseResult")
    return isinstance(result, dict) and ("agentId" in result or "totalDurationMs" in result)


def scan_result(content: object, session_id, agent_id, ts, path: str, line_no: int,
                chunk) -> None:
    """Scan a ``tool_result`` content (a string or a list of text items) for blocks."""
    if isinstance(content, str):
        if marked(content):
            scan(content, session_id, agent_id, ts, path, line_no, chunk)
    elif isinstance(content, list):
        for item in content:
            if isinstance(item, dict) and marked(item.get("text")):
                scan(item["text"], session_id, agent_id, ts, path, line_no, chunk)


def scan(text: str, session_id, agent_id, ts, path: str, line_no: int, chunk) -> None:
    """Add the blocks of ``text`` (found on transcript line ``line_no``) to ``chunk.broker``."""
    blocks, problems = find_blocks(text)
    blocks = [b for b in blocks if not _PLACEHOLDER.match(b.sprint)]
    for text_line, reason in problems:
        if _TEMPLATE_ERROR.search(reason):
            continue  # a line of the format template (<nom>), not a real block
        chunk.error(path, line_no, f"{_safe(reason)} (line {text_line} of the message text)")
    if not blocks:
        return
    out = chunk.broker
    block_list = out.setdefault("broker_blocks", [])
    file_list = out.setdefault("broker_block_files", [])
    ordinal = 0  # blocks already taken from this transcript line (several texts per line)
    for row in reversed(block_list):
        if row["line"] != line_no:
            break
        ordinal += 1
    for block in blocks:
        _add(block, f"{path}:{line_no}.{ordinal}", session_id, agent_id, ts, path, line_no,
             block_list, file_list)
        ordinal += 1


def _add(block: BrokerBlock, block_id: str, session_id, agent_id, ts, path, line_no,
         block_list: list, file_list: list) -> None:
    rows = block_rows([block], path, ts)
    for row in rows["broker_blocks"]:
        row.update(block_id=block_id, line=line_no, session_id=session_id, agent_id=agent_id,
                   sprint=redact_truncate(row["sprint"], NAME_CHARS),
                   project=redact_truncate(row["project"], NAME_CHARS),
                   mode=redact_truncate(row["mode"], NAME_CHARS),
                   reason=redact_truncate(row["reason"], REASON_CHARS))
        block_list.append(row)
    for row in rows["broker_block_files"]:
        row.update(block_id=block_id, line=line_no,
                   sprint=redact_truncate(row["sprint"], NAME_CHARS),
                   agent=redact_truncate(row["agent"], NAME_CHARS),
                   path=redact_truncate(row["path"], PATH_CHARS),
                   reason=redact_truncate(row["reason"], REASON_CHARS))
        file_list.append(row)


def _safe(reason: str) -> str:
    """The error without the offending text (a transcript's text is never stored)."""
    match = _SAFE_REASON.match(reason)
    return redact_truncate(match.group(1) if match else reason, 300)
