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


# Literal substrings each pattern's every match contains (case-sensitive unless marked): a
# pattern runs only when one is present, so a path, a model name or an id costs a few
# substring tests instead of 18 regex passes (redaction was a third of the parse time).
_NEEDLES: dict[str, tuple[str, ...]] = {
    "private-key": ("-----BEGIN",),
    "anthropic-key": ("sk-ant-",),
    "openai-key": ("sk-",),
    "stripe-key": ("_live_", "_test_"),
    "aws-access-key": ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA"),
    "google-api-key": ("AIza",),
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab-token": ("glpat-",),
    "slack-token": ("xox",),
    "slack-webhook": ("hooks.slack.com/services/",),
    "npm-token": ("npm_",),
    "huggingface-token": ("hf_",),
    "sendgrid-key": ("SG.",),
    "jwt": ("eyJ",),
    "bearer": (),  # case-insensitive: checked on the lowered text (_LOWER_NEEDLES)
    "url-password": ("://",),
    "secret-assignment": (":", "="),
    "env-value": ("=",),
}
_BEARER = "bearer "
_LOWER_NEEDLES = {"bearer": _BEARER}  # the only case-insensitive needle (clean() tests it)
_CHECKS = [(kind, pattern, _NEEDLES[kind], _LOWER_NEEDLES.get(kind))
           for kind, pattern in _PATTERNS]
# secret-assignment also needs one of its names (any case): the costliest rule, run on every
# command with a ":" or "=" otherwise. Non-ASCII letters that re's IGNORECASE matches to
# ASCII ones (the only four, checked over every code point) are folded before the test.
_NAMES = ("key", "secret", "token", "pass", "pwd", "credential", "auth", "private", "session",
          "cookie", "signature", "salt", "dsn")
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def _named(text: str) -> bool:
    lower = text.translate(_FOLD).lower()
    return any(name in lower for name in _NAMES)


def _redact_every_rule(text: str) -> str:
    """Every pattern in turn, no prefilter (the reference :func:`_redact` must agree with)."""
    for kind, pattern in _PATTERNS:
        text = pattern.sub(lambda m, k=kind: _sub(k, m), text)
    return text


# every needle, without those containing another (sk-ant- holds sk-, :// holds :), the
# common ones first: a loop of substring tests beats one regex alternation 3-5x
_ANY_NEEDLES = tuple(sorted(
    {n for needles in _NEEDLES.values() for n in needles
     if not any(o != n and o in n for ns in _NEEDLES.values() for o in ns)},
    key=lambda n: (len(n) > 1, n)))


def clean(text: str) -> bool:
    """Whether no rule can match ``text`` (no needle in it): :func:`redact` returns it as is."""
    for needle in _ANY_NEEDLES:
        if needle in text:
            return False
    return _BEARER not in text.lower()


def _redact(text: str) -> str:
    """Every pattern whose needle is in the text (as it stands after the earlier ones)."""
    if clean(text):  # most kept strings: a few substring tests, nothing to do
        return text
    for kind, pattern, needles, lower in _CHECKS:
        if lower is not None:
            if lower not in text.lower():
                continue
        elif not any(needle in text for needle in needles):
            continue
        if kind == "secret-assignment" and not _named(text):
            continue
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
