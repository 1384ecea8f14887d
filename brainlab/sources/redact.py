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
        elif rule.kind == "flag-input":
            text = rule.pattern.sub(_flag_input, text)
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
        text = _PAIRED.sub(_paired, text)  # a key id's mark: the secret next to it goes too
    return text


# A key id (AWS `AKIA...`, Alibaba `LTAI...`, a client or access id) and its secret written
# side by side: after blanks, a comma, a colon or a pipe, quoted or not, possibly after the
# secret's own name (`aws_secret_access_key`, `secret:`). The id is public-ish; the secret
# next to it is what the pair is for (issue 47).
_PAIRED = re.compile(
    r"\[REDACTED:(?:aws-access-key|[a-z0-9-]*?(?:key-id|client-id|access-id|api-id))\]['\"]?+"
    r"(?:[ \t]*+[,:;|=][ \t]*+|[ \t]++)(?:[A-Za-z_][A-Za-z0-9_.\-]{0,40}+[ \t]*+[:=]?+[ \t]*+)??"
    r"(['\"]?+)(?!\[REDACTED)([A-Za-z0-9/+=_\-]{16,}+)\1(?![A-Za-z0-9/+=_\-])")
PAIRED_MIN_ENTROPY = 3.0  # bits per character (an AWS secret: 4.5-5)


def _paired(match: re.Match[str]) -> str:
    """The secret after a key id's mark, when it looks like one (letters and digits, entropy)."""
    value = match.group(2)
    if not (any(c.isdigit() or c in "/+" for c in value) and any(c.isalpha() for c in value)
            and entropy(value) >= PAIRED_MIN_ENTROPY):
        return match.group(0)
    start, end = match.span(2)
    whole, base = match.group(0), match.start()
    return whole[:start - base] + MARK.format("paired-secret") + whole[end - base:]


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
        sub = _SUBSTITUTED.match(text, end)
        if sub:  # `TOKEN=$(echo X)`: what the substitution prints; `$(cat f)` names a file.
            # A backtick span that prints nothing is a markdown code span: its content goes.
            group = 2 if sub.start(2) >= 0 else 3
            spans = _printed(text, *sub.span(group)) or (
                [sub.span(group)] if group == 3 and sub.end(3) - sub.start(3) >= 4 else [])
            if spans:
                out += [text[done:spans[0][0]], MARK.format(rule.kind)]
                done = end = spans[0][1]
            continue
        tail = rule.pattern.match(text, end)
        if tail:
            group = next(g for g in (2, 3, 4) if tail.start(g) >= 0)
            stop = tail.end(group)
            if group == 4 and ":" in tail.group(1) and text[start:end] != "PASS" \
                    and _PASSWORD_NAME.search(lowered, start, end):  # `PASS:` a test's status
                stop = _passphrase_end(text, stop)
            out += [text[done:tail.start(group)], MARK.format(rule.kind)]
            done = end = stop
    return "".join(out) + text[done:] if out else text


# A name that holds a password (not a key or token) then `:` (YAML, prose; `=` is the shell's,
# where a blank ends the value): its unquoted value may be several words (`pass: correct
# horse battery staple`). It runs to the end of the line, or to the next `name:` / `name=`
# (after a blank, `,` or `;`), or to a shell operator, whichever comes first; a count stays
# (`pass: 3 tests`, a first word of digits).
_PASSWORD_NAME = re.compile(r"(?:pass(?:wd|word|phrase|_phrase|-phrase)?|pwd)(?![a-z])")
_NEXT_KEY = re.compile(r"[,;]?[ \t]++[A-Za-z_][A-Za-z0-9_.\-]*+[ \t]*+[:=]|[,;][ \t]|\n|\r"
                       r"|[ \t]*+(?:[|&;<>`)]|\$\()")
_WORD_GAP = re.compile(r"[ \t]++(?=[^\s])")


def _passphrase_end(text: str, stop: int) -> int:
    """Where an unquoted password value that started before ``stop`` ends (see _PASSWORD_NAME)."""
    gap = _WORD_GAP.match(text, stop)
    if gap is None:
        return stop
    first = text.rfind(" ", 0, stop) + 1
    if text[max(first, text.rfind(":", 0, stop) + 1, text.rfind("=", 0, stop) + 1):stop] \
            .strip().isdigit():
        return stop
    line_end = len(text)
    for end in (text.find("\n", stop), text.find("\r", stop)):
        if 0 <= end < line_end:
            line_end = end
    found = _NEXT_KEY.search(text, stop, line_end)
    end = found.start() if found else line_end
    value = text[stop:end]  # within one line
    return stop + len(value.rstrip()) if end > stop else stop


def _flag_input(match: re.Match[str]) -> str:
    """What a secret-bearing flag receives through the shell (the flag-input rule).

    A here-string's word and a here-document's body go whole; inside a process or command
    substitution only the words ``echo``/``printf`` print go (``$(cat f)``, ``<(pass show x)``
    name where the secret is and stay). A ``$VAR`` here-string stays (a name, not a value).
    """
    flag = match.group(1).lstrip("-").replace("-", "").replace("_", "").lower()
    if flag.endswith("stdin"):
        flag = flag[:-5]
    if flag not in SECRET_FLAGS:
        return match.group(0)
    spans: list[tuple[int, int]] = []
    if match.start(2) >= 0:
        start, end = match.span(2)
        if match.string[start] in "\"'":
            start, end = start + 1, end - 1
        if end > start and match.string[start] != "$":
            spans.append((start, end))
    elif match.start(10) >= 0:
        if match.end(10) > match.start(10):
            spans.append(match.span(10))
    else:
        group = next(g for g in (3, 5, 7) if match.start(g) >= 0)
        spans += _printed(match.string, *match.span(group))
    if not spans:
        return match.group(0)
    whole, base, out, done = match.group(0), match.start(), [], 0
    for start, end in spans:
        out += [whole[done:start - base], MARK.format("flag-value")]
        done = end - base
    return "".join(out) + whole[done:]


_SUBSTITUTED = re.compile(r"\"?\s*+[:=]\s*+(\"?+)(?:\$\(([^()\n]*+)\)|`([^`\n]*+)`)")
_PRINTER = re.compile(r"[ \t]*+(?:echo|printf)[ \t]++(?:-[A-Za-z]++[ \t]++)*+(?:(['\"])%s(?:\\n)?"
                      r"\1[ \t]++)?+(.+?)[ \t]*+$")


def _printed(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The span of the words ``echo``/``printf`` prints in ``text[start:end]`` (else none)."""
    found = _PRINTER.match(text, start, end)
    if not found:
        return []
    first, last = found.span(2)
    if text[first] in "\"'" and text[last - 1] == text[first] and last - first > 1:
        first, last = first + 1, last - 1
    return [(first, last)] if last > first and text[first] != "$" else []


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
