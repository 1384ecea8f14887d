"""Redact secret-shaped strings from text brainlab keeps (SPEC §7: never store secrets verbatim).

Transcripts carry prompts, file contents and command output. brainlab keeps only what analysis
needs (paths, tool names, sizes, counts, truncated commands), and every textual value it keeps
goes through :func:`redact` first: provider API keys, GitHub/GitLab/Slack/npm/Hugging Face
tokens, JWTs, private key blocks, ``KEY=value`` assignments (.env lines, inline environment),
``Authorization`` headers and passwords in URLs become ``[REDACTED:<kind>]``.
"""

from __future__ import annotations

import re
from functools import lru_cache

MARK = "[REDACTED:{}]"

# (kind, pattern). Order matters: specific token shapes first, then the generic assignments.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("private-key", re.compile(
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(-----END[A-Z0-9 ]*PRIVATE KEY"
        r"( BLOCK)?-----|\Z)", re.S)),
    ("anthropic-key", re.compile(r"sk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai-key", re.compile(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abposre]-[A-Za-z0-9\-]{10,}")),
    ("slack-webhook", re.compile(r"hooks\.slack\.com/services/[A-Za-z0-9/_\-]+")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}")),
    ("bearer", re.compile(r"(?i)(?<=bearer )[A-Za-z0-9_\-.=+/]{12,}")),
    ("url-password", re.compile(r"(?<=://)[^/\s:@]+:[^@\s/]+(?=@)")),
    # KEY=value / KEY: value where the name says it is a secret (any case), e.g. .env lines,
    # `export TOKEN=...`, `password: hunter2`, JSON "apiKey": "...".
    ("secret-assignment", re.compile(
        r"(?i)(?<![A-Za-z0-9])([A-Za-z0-9_.\-]*(?:key|secret|token|passw(?:or)?d|pwd|pass"
        r"|credential|auth|private|session|cookie|signature|salt|dsn)[A-Za-z0-9_.\-]*)"
        r"(\"?\s*[:=]\s*\"?)(?!\[REDACTED)([^\s\"',;&|]{4,})")),
    # Any other UPPER_CASE=value assignment (the .env shape): the value goes, the name stays.
    ("env-value", re.compile(
        r"(?m)(?<![A-Za-z0-9_])([A-Z][A-Z0-9_]{2,})=(?!\[REDACTED)([^\s\"'`;&|]{6,})")),
]


def _sub(kind: str, match: re.Match[str]) -> str:
    if kind in ("secret-assignment",):
        return match.group(1) + match.group(2) + MARK.format(kind)
    if kind == "env-value":
        return match.group(1) + "=" + MARK.format(kind)
    if kind == "url-password":
        user = match.group(0).split(":", 1)[0]
        return user + ":" + MARK.format(kind)
    return MARK.format(kind)


def _redact(text: str) -> str:
    for kind, pattern in _PATTERNS:
        text = pattern.sub(lambda m, k=kind: _sub(k, m), text)
    return text


_redact_short = lru_cache(maxsize=65536)(_redact)  # cwd, model, paths repeat on every line
CACHE_MAX_CHARS = 512  # longer texts (commands) are not cached, so the cache stays small


def redact(text: str | None) -> str | None:
    """Return ``text`` with every secret-shaped substring replaced by a ``[REDACTED:kind]`` mark."""
    if not text:
        return text
    return _redact_short(text) if len(text) <= CACHE_MAX_CHARS else _redact(text)


def redact_truncate(text: str | None, limit: int) -> str | None:
    """Redact first, then cut to ``limit`` characters (cutting first could split a secret)."""
    text = redact(text)
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + "…"
