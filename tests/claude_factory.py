"""Build Claude Code transcript lines by hand for tests (the real line shapes, small)."""

from __future__ import annotations

import json
from pathlib import Path


def usage(inp=0, out=0, cw=0, cr=0, cw1h=None):
    """A usage block; cw1h splits the cache writes into 5 min / 1 h when given."""
    u = {"input_tokens": inp, "output_tokens": out, "cache_creation_input_tokens": cw,
         "cache_read_input_tokens": cr}
    if cw1h is not None:
        u["cache_creation"] = {"ephemeral_5m_input_tokens": cw - cw1h,
                               "ephemeral_1h_input_tokens": cw1h}
    return u


def assistant(session, ts, msg_id, req_id, u, model="claude-opus-4-5-20251101", content=None,
              agent=None, sidechain=False, cwd="/home/u/projets/alpha", **fields):
    """One assistant line (one content block, as Claude Code writes them); ``fields`` are
    more top-level fields (attributionSkill=..., advisorModel=...)."""
    line = {"type": "assistant", "sessionId": session, "timestamp": ts, "cwd": cwd,
            "isSidechain": sidechain, "uuid": f"u-{msg_id}-{ts}",
            "message": {"id": msg_id, "model": model, "role": "assistant",
                        "content": content or [{"type": "text", "text": "ok"}], "usage": u}}
    if req_id is not None:
        line["requestId"] = req_id
    if agent:
        line["agentId"] = agent
    line.update(fields)
    return line


def advisor(model="claude-opus-4-8", inp=0, out=0, cw=0, cr=0):
    """An ``advisor_message`` entry of ``usage.iterations`` (newer Claude Code versions)."""
    return {"type": "advisor_message", "model": model, "input_tokens": inp,
            "output_tokens": out, "cache_creation_input_tokens": cw,
            "cache_read_input_tokens": cr}


def tool_use(tool_id, name, **args):
    """A tool_use content block."""
    return {"type": "tool_use", "id": tool_id, "name": name, "input": args}


def user(session, ts, text="hi", results=None, agent=None, tool_use_result=None, **fields):
    """A user line: a prompt, or tool results [(tool_use_id, content)]."""
    content = [{"type": "tool_result", "tool_use_id": tid, "content": body}
               for tid, body in results] if results else text
    line = {"type": "user", "sessionId": session, "timestamp": ts,
            "cwd": "/home/u/projets/alpha", "message": {"role": "user", "content": content}}
    if agent:
        line["agentId"] = agent
        line["isSidechain"] = True
    if tool_use_result is not None:
        line["toolUseResult"] = tool_use_result
    line.update(fields)
    return line


def progress(session, ts, agent, parent_tool, msg_id, req_id, u, model="claude-haiku-4-5-20251001"):
    """An agent_progress line nesting a subagent's assistant message (and its usage)."""
    return {"type": "progress", "sessionId": session, "timestamp": ts,
            "parentToolUseID": parent_tool, "toolUseID": "p-" + msg_id,
            "data": {"type": "agent_progress", "agentId": agent, "prompt": "x",
                     "message": {"type": "assistant", "timestamp": ts, "requestId": req_id,
                                 "message": {"id": msg_id, "model": model, "role": "assistant",
                                             "content": [{"type": "text", "text": "."}],
                                             "usage": u}}}}


def write(path: Path, lines, spaced=False, newline_at_end=True) -> Path:
    """Write lines (dicts, or raw bytes/str kept as is) as JSONL."""
    path.parent.mkdir(parents=True, exist_ok=True)
    chunks = []
    for line in lines:
        if isinstance(line, bytes):
            chunks.append(line)
        elif isinstance(line, str):
            chunks.append(line.encode())
        else:
            sep = (", ", ": ") if spaced else (",", ":")
            chunks.append(json.dumps(line, separators=sep, ensure_ascii=False).encode())
    data = b"\n".join(chunks) + (b"\n" if newline_at_end else b"")
    path.write_bytes(data)
    return path
