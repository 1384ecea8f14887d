"""Redact secret-shaped strings from text brainlab keeps (SPEC §7: never store secrets verbatim).

Transcripts carry prompts, file contents and command output; brain files carry notes and
signals where a token can be pasted. brainlab keeps only what analysis needs, and every textual
value it keeps goes through :func:`redact` first: each secret becomes ``[REDACTED:<kind>]``.
The rules (:mod:`brainlab.sources.secret_rules`) are detect-secrets' token plugins plus
brainlab's own command-line and assignment rules; one prefilter scan lets a text with no
candidate (most of them) pass at the cost of a single regex search.
"""

from __future__ import annotations

import re
from functools import lru_cache

from brainlab.sources.gitleaks_rules import entropy
from brainlab.sources.secret_rules import (
    NAME_CHARS,
    P_PASSWORD_COMMANDS,
    RULES,
    SECRET_FLAGS,
    SECRET_WORD,
    SECRET_WORD_LOWER,
    Rule,
    has_candidate,
    hints_present,
)

MARK = "[REDACTED:{}]"
# Token characters glued right after a mark: the rest of a secret that the rule which matched
# first ate into (``ghp_<36>sk-proj-<40>``: the GitHub rule takes ``sk`` and the OpenAI rule,
# which starts only at a word boundary, no longer sees its key). Redacted as a whole.
_GLUED = re.compile(r"(?<=\[REDACTED:)([a-z0-9-]++\])([A-Za-z0-9_\-]{8,}+(?:[/+=]"
                    r"[A-Za-z0-9_\-/+=]*+)?+)")  # an AWS secret glued to its key id has '/'
_COMMAND_START = re.compile(r"(?:^|[\n;|&(`]|\$\()\s*+")
_EDGE = " \t\r\n=:\"'"  # delimiters a pattern may match around the secret itself


def _mark(rule: Rule, match: re.Match[str]) -> str:
    start, end = match.span(rule.group)
    whole = match.group(0)
    if start < 0 and rule.group:  # an alternation: the first group that took part
        start, end = next((match.span(g) for g in range(1, (match.re.groups or 0) + 1)
                           if match.start(g) >= 0), (-1, -1))
    if start < 0:
        return whole
    if rule.min_entropy and entropy(match.string[start:end]) < rule.min_entropy:
        return whole
    first, last = start - match.start(), end - match.start()
    while first < last and whole[first] in _EDGE:
        first += 1
    while last > first and whole[last - 1] in _EDGE:
        last -= 1
    return whole[:first] + MARK.format(rule.kind) + whole[last:]


def _redact(text: str, prefilter: bool = True) -> str:
    lowered = text.lower()
    if prefilter and not has_candidate(text, lowered):
        return text
    cased, nocase = hints_present(text, lowered)  # one scan for all rules' hints
    for rule in RULES:
        if rule.hint_set.isdisjoint(nocase if rule.nocase else cased):
            continue  # a rule's hint is part of it (mysql -p needs mysql)
        before = text
        if rule.kind == "secret-assignment":
            text = _assignments(rule, text, text.lower())
        elif rule.kind == "flag-value":
            text = rule.pattern.sub(lambda m, r=rule: _flag(r, m), text)
        elif rule.kind == "secret-word-value":
            text = rule.pattern.sub(lambda m, r=rule: _word_value(r, m), text)
        else:
            text = rule.pattern.sub(lambda m, r=rule: _mark(r, m), text)
        if text is not before and text != before:  # marks add or remove hints: scan again
            lowered = text.lower()
            cased, nocase = hints_present(text, lowered)
    if "[REDACTED:" in text:
        text = _GLUED.sub(lambda m: m.group(1) + MARK.format("glued-secret"), text)
    return text


def _redact_every_rule(text: str) -> str:
    """Every rule on ``text`` without the global prefilter (has_candidate): what it must not change."""
    return _redact(text, prefilter=False)


def _assignments(rule: Rule, text: str, lowered: str) -> str:
    """``<name holding a secret word><sep><value>``: the value goes (linear: word first).

    The words are searched in the lower-cased text (10x faster than a case-blind regex)
    unless lower-casing changed the length (some non-ASCII letters), which would shift offsets.
    """
    out: list[str] = []
    done = end = 0
    words = SECRET_WORD_LOWER.finditer(lowered) if len(lowered) == len(text) \
        else SECRET_WORD.finditer(text)
    for word in words:
        if word.start() < end:  # inside a name already looked at
            continue
        start, end = word.start(), word.end()
        while start > 0 and text[start - 1] in NAME_CHARS:
            start -= 1
        while end < len(text) and text[end] in NAME_CHARS:
            end += 1
        tail = rule.pattern.match(text, end)
        if tail:
            group = next(g for g in (2, 3, 4) if tail.start(g) >= 0)
            stop = tail.end(group)
            if "phrase" in lowered[start:word.end() + 8] and group == 4:  # words to line end
                newline = text.find("\n", stop)
                stop = len(text) if newline < 0 else newline
            out += [text[done:tail.start(group)], MARK.format(rule.kind)]
            done = end = stop
    return "".join(out) + text[done:] if out else text


def _flag(rule: Rule, match: re.Match[str]) -> str:
    """A secret-bearing flag's next argument; ``-p X`` only after a command that means it."""
    flag = match.group(1)
    if flag == "-p":
        starts = list(_COMMAND_START.finditer(match.string, max(0, match.start() - 300),
                                              match.start()))
        line = match.string[starts[-1].end() if starts else max(0, match.start() - 300):
                            match.start()]
        if not any(word.rsplit("/", 1)[-1] in P_PASSWORD_COMMANDS for word in line.split()[:2]):
            return match.group(0)
    elif flag.lstrip("-").replace("-", "").replace("_", "").lower() not in SECRET_FLAGS:
        return match.group(0)
    group = next(g for g in (2, 3, 4) if match.start(g) >= 0)
    start, end = match.start(group) - match.start(), match.end(group) - match.start()
    whole = match.group(0)
    return whole[:start] + MARK.format(rule.kind) + whole[end:]


WORD_VALUE_MIN_ENTROPY = 2.5  # bits per character of a prose secret (`hunter2abc`: 3.3)
_FILE_NAME = re.compile(r"\.[A-Za-z]{1,5}$")  # `password1.txt` names a file
_NAME_PARTS = re.compile(r"[-_.]")  # `claude-3-opus`: words and numbers joined, a name
_STRONG = frozenset("!@#$%^&*+=~")


def _word_value(rule: Rule, match: re.Match[str]) -> str:
    """``token <value>`` in prose: the value goes when it looks like a credential.

    It must hold a letter and a digit or a symbol (a word, a count, ``budget`` stay), not end
    like a file name, not be words and numbers joined by ``-_.`` (``claude-3-opus``) and reach
    :data:`WORD_VALUE_MIN_ENTROPY` (``aaaa1111`` stays).
    """
    value = match.group(1).rstrip(".*")  # a sentence's end, markdown bold
    parts = _NAME_PARTS.split(value)
    if len(value) < 8 or not any(c.isalpha() for c in value) \
            or not any(c.isdigit() or c in _STRONG for c in value) \
            or _FILE_NAME.search(value) or entropy(value) < WORD_VALUE_MIN_ENTROPY \
            or (len(parts) > 1 and all(p.isalpha() or p.isdigit() for p in parts if p)):
        return match.group(0)
    whole, start = match.group(0), match.start(1) - match.start()
    return whole[:start] + MARK.format(rule.kind) + whole[start + len(value):]


_redact_short = lru_cache(maxsize=65536)(_redact)  # cwd, model, paths repeat on every line
CACHE_MAX_CHARS = 512  # longer texts (commands) are not cached, so the cache stays small


def redact(text: str | None) -> str | None:
    """Return ``text`` with every secret-shaped substring replaced by a ``[REDACTED:kind]`` mark."""
    if not text:
        return text
    return _redact_short(text) if len(text) <= CACHE_MAX_CHARS else _redact(text)


def stored_path(path) -> str:
    """``path`` as the store keeps it: :func:`redact` applied to each component (issue 29).

    A folder or file name holding a token becomes ``[REDACTED:kind]``; a path without one is
    returned unchanged. Deterministic, so incremental ingest matches a file on disk with its
    stored row by this form while it reads the file by its real path.
    """
    import os

    text = str(path)
    if not has_candidate(text, text.lower()):
        return text
    return os.sep.join(redact(part) or part for part in text.split(os.sep))


def redact_truncate(text: str | None, limit: int) -> str | None:
    """Redact first, then cut to ``limit`` characters (cutting first could split a secret)."""
    text = redact(text)
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + "…"
