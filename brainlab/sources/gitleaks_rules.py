"""gitleaks' maintained rule list as brainlab secret rules (the data file, translated to Python).

``brainlab/data/gitleaks.toml`` is gitleaks' default configuration (``config/gitleaks.toml``,
MIT licence in ``brainlab/data/gitleaks.LICENSE``), vendored unchanged at the release in
:data:`GITLEAKS_VERSION`: data, not code. Each ``[[rules]]`` entry gives an id, a Go regex,
the keywords one of which must be in the (lower-cased) text first, an optional secret group
and an optional Shannon entropy floor. Go's syntax differs from Python's in two places used
there: ``\\z`` (Python ``\\Z``) and an inline ``(?i)`` after the start (Python accepts it only
at the start: the whole pattern is made case-blind, which redacts more, never less). The
``[\\w.-]{0,50}?`` that keyword-context rules put before their keyword is dropped: it only
widens the match to the left of the secret group, and costs quadratic time on hostile text.

A rule is used unless :data:`EXCLUDED` names it with the reason; :data:`HINTS` replaces the
keywords of a rule whose keyword is in most texts (``ey``, ``s.``, ``sk``). Parsing the TOML
costs ~100 ms, so the translated rules are kept as JSON in the cache folder, one file per
vendored file's digest (an update of the data file is read again).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

GITLEAKS_VERSION = "8.30.1"  # the release tag the data file was taken from
GITLEAKS_COMMIT = "83d9cd684c87d95d656c1458ef04895a7f1cbd8e"
DATA = Path(__file__).resolve().parent.parent / "data" / "gitleaks.toml"
DATA_SHA256 = "e163e53b9e7e8a8511e77271e2b323ed057759542a6d988258afe3a1fa329caf"
TRANSLATION = 2  # bump when translate() changes: the cached rules are made again

EXCLUDED: dict[str, str] = {
    "generic-api-key": "keyword-context rule for any `key`/`token`/`auth` name: brainlab's "
                       "secret-assignment rule, which keeps the name, covers it",
    "jwt": "keyword `ey` is in most texts; detect-secrets' and brainlab's jwt rules cover it",
    "curl-auth-user": "`curl.*` then `-u` backtracks once per `curl` (quadratic); brainlab's "
                      "curl-user rule covers it",
    "curl-auth-header": "`curl.*?` then a header backtracks (quadratic); brainlab's bearer "
                        "and basic-auth rules cover it",
    "pkcs12-file": "a rule on file paths, no regex",
    "private-key": "brainlab's private-key rule redacts the whole block first",
}
# Rules whose gitleaks keywords are in most texts: the hints used instead (cased).
HINTS: dict[str, tuple[str, ...]] = {
    "twilio-api-key": ("SK",),
    "vault-service-token": ("hvs.",),
}


def translate(source: str) -> tuple[str, int]:
    """A gitleaks (Go RE2) regex as a Python regex and its flags."""
    flags = 0
    # The `[\w.-]{0,50}?` before a keyword only widens the match leftwards (the secret is a
    # group after it) and makes a text of repeated keywords quadratic: left out.
    body = source.replace(r"\z", r"\Z").replace(r"[\w.-]{0,50}?", "")
    if "(?i)" in body[1:]:
        body = body[:1] + body[1:].replace("(?i)", "")
        flags |= re.IGNORECASE
    return body, flags


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character (gitleaks' ``entropy`` floor)."""
    import math

    if not text:
        return 0.0
    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def load_rules() -> list[dict]:
    """The used rules as dicts (id, regex, flags, hints, nocase, group, entropy)."""
    cache = _cache_path()
    try:
        if cache is not None:
            rows = json.loads(cache.read_text(encoding="utf-8"))
            if isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows):
                return rows
    except (OSError, ValueError):
        pass
    rows = _from_toml()
    _write(cache, rows)
    return rows


def _from_toml() -> list[dict]:
    import tomllib
    import warnings

    with open(DATA, "rb") as handle:
        config = tomllib.load(handle)
    rows = []
    for rule in config["rules"]:
        if rule["id"] in EXCLUDED or not rule.get("regex") or not rule.get("keywords"):
            continue
        source, flags = translate(rule["regex"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # Go's `[[` is a plain `[`
            compiled = re.compile(source, flags)
        hints = HINTS.get(rule["id"])
        rows.append({"id": rule["id"], "regex": source, "flags": flags,
                     "hints": list(hints or [k.lower() for k in rule["keywords"]]),
                     "nocase": hints is None,
                     "group": rule.get("secretGroup") or (1 if compiled.groups else 0),
                     "entropy": rule.get("entropy")})
    return rows


def _cache_path() -> Path | None:
    try:
        from brainlab.common.paths import cache_dir

        key = hashlib.sha256(json.dumps([DATA_SHA256, sorted(EXCLUDED), HINTS, TRANSLATION],
                                        sort_keys=True).encode()).hexdigest()[:16]
        return cache_dir() / f"secret-patterns-gitleaks-{key}.json"
    except (OSError, RuntimeError):
        return None


def _write(path: Path | None, rows: list[dict]) -> None:
    """Write the cache atomically; a cache that cannot be written is skipped."""
    import contextlib
    import os
    import tempfile

    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(prefix=".secret-patterns-", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(rows, out)
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(partial)


def data_digest() -> str:
    """The sha256 of the vendored data file (a test pins it to :data:`DATA_SHA256`)."""
    return hashlib.sha256(DATA.read_bytes()).hexdigest()
