"""Data strings printed as plain text: control characters made visible (issue 29, injection 2).

Model names, project names, paths, commands and file contents come from transcripts and brain
files anyone can write. Printed raw, an ESC or C1 CSI (U+009B) sequence clears the screen,
retitles the window or plants an OSC-8 hyperlink; a line or paragraph separator (U+2028/9)
or a bidi override hides what follows. :func:`visible` turns each such character into its
``\\xNN`` / ``\\uNNNN`` escape, so what is printed is the data's text and nothing else;
every printer of data calls it (tables' cells and headers, ``check`` text, ``errors``,
``ingest claude``'s unpriced models, one-line errors). rich never reads markup from data:
brainlab's consoles are made with markup off (:mod:`brainlab.common.terminal`).

:func:`json_safe` does the same for JSON and SARIF, which may carry U+009B and U+2028 raw
(``ensure_ascii=False``): they are written as ``\\u`` escapes, which every JSON reader
decodes back to the same string.
"""

from __future__ import annotations

import re

MISSING = "—"  # the one missing-value marker (tables, the status line: a value not shown)

# DEL, C1, line/paragraph separators, bidi embeddings/overrides/isolates and marks (LRM, RLM,
# ALM), the other invisible format characters (soft hyphen, zero-width space and joiners,
# word joiner, invisible operators, interlinear annotation, BOM, tag characters), and lone
# surrogates (a JSON ``\ud800`` escape: unprintable, it made a whole line vanish); and C0.
_OTHER = ("\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064"
          "\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb\U000e0001\U000e0020-\U000e007f")
_PATTERNS: dict[bool, re.Pattern[str]] = {}  # keep_tabs -> the pattern, compiled on first need
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: object, keep_tabs: bool = False) -> str:
    """``text`` with every control character shown as its escape (``\\x1b``, ``\\u009b``).

    Text Python calls printable is returned as it is: every character escaped here is of a
    category ``str.isprintable`` refuses (Cc, Cf, Cs, Zl, Zp), so the usual name or number
    costs no regular expression (the status line prints through this at every message).
    """
    text = "" if text is None else str(text)
    if text.isprintable():
        return text
    pattern = _PATTERNS.get(keep_tabs)
    if pattern is None:
        low = "\x00-\x08\x0a-\x1f" if keep_tabs else "\x00-\x1f"  # a tab kept, or not
        pattern = _PATTERNS[keep_tabs] = re.compile(f"[{low}{_OTHER}]")
    return pattern.sub(_escape, text) if pattern.search(text) else text


def json_safe(document: str) -> str:
    """A JSON text with DEL, C1, U+2028/9 and bidi controls written as ``\\u`` escapes."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", document)
