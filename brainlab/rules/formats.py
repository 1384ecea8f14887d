"""Print a check's result: ``file:line: RULE-ID message`` text, a JSON list, or SARIF 2.1.0.

SARIF (OASIS Static Analysis Results Interchange Format 2.1.0) lets a brain repository's CI
annotate the files (e.g. GitHub code scanning); tests validate the output against the
official schema. File-level findings (no line) point at line 1, as code linters do.
"""

from __future__ import annotations

import json
from collections import Counter
from urllib.parse import quote

from brainlab import __version__
from brainlab.common.plaintext import json_safe, visible
from brainlab.rules.check import CheckResult

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVELS = {"error": "error", "warning": "warning", "info": "note"}
# GitHub code scanning accepts at most this many results per run (its SARIF upload limits).
SARIF_MAX_RESULTS = 25_000
FORMATS = ("text", "json", "sarif")


def render(result: CheckResult, fmt: str) -> str:
    """The result in ``fmt`` (text, json or sarif)."""
    return {"text": text, "json": as_json, "sarif": sarif}[fmt](result)


def text(result: CheckResult) -> str:
    """Rules not evaluated first, one line per violation and unreadable file, then a summary."""
    lines = []
    if result.not_evaluated:  # said first, plainly: the summary below covers fewer rules
        lines.append(f"{len(result.not_evaluated)} of "
                     f"{len(result.not_evaluated) + len(result.rules)} rules not evaluated:"
                     f" they read transcripts (give --db DB): "
                     f"{', '.join(r.id for r in result.not_evaluated)}.")
    lines += [f"{visible(v.file)}:{v.line or 1}: {v.rule} [{v.severity}] {visible(v.subject)}:"
              f" {visible(v.message)}" for v in result.violations]
    lines += [f"{visible(file)}:{line or 1}: could not be read, skipped: {visible(reason)}"
              for file, line, reason in result.parse_problems]
    by_severity = Counter(v.severity for v in result.violations)
    by_rule = Counter(v.rule for v in result.violations)
    if result.violations:
        counts = ", ".join(f"{by_severity[s]} {s}" for s in ("error", "warning", "info")
                           if by_severity[s])
        rules = ", ".join(f"{r} {n}" for r, n in sorted(by_rule.items()))
        summary = f"Found {len(result.violations)} violation(s) ({counts}): {rules}"
    else:
        summary = f"No violation of the {len(result.rules)} rule(s) checked"
    if result.not_evaluated:
        summary += f" ({len(result.not_evaluated)} not evaluated)"
    if result.parse_problems:
        summary += f"; {len(result.parse_problems)} file(s) could not be read"
    lines.append(summary + ".")
    return "\n".join(lines)


def as_json(result: CheckResult) -> str:
    """A JSON list of violations, then one item per file that could not be read.

    A violation has rule, severity, subject, file, line, message and more; an unreadable file
    the same keys with ``rule`` null (CheckResult.as_dicts).
    """
    return json_safe(json.dumps(result.as_dicts(), indent=2, ensure_ascii=False))


def sarif(result: CheckResult, max_results: int = SARIF_MAX_RESULTS) -> str:
    """A SARIF 2.1.0 log with one run: the catalogue rules checked and one result each.

    URIs are percent-encoded (RFC 3986: a space, ``#``, ``%`` or control character in a file
    name); past ``max_results`` results the rest are left out with a warning notification.
    """
    rules = [{
        "id": r.id, "name": r.name,
        "shortDescription": {"text": r.checks},
        "fullDescription": {"text": f"{r.checks} SPEC {r.spec}; seed {r.seed}. "
                                    f"Evidence: {r.evidence}."},
        "defaultConfiguration": {"level": SARIF_LEVELS[r.severity]},
        "properties": {"spec": r.spec, "seed": r.seed, "subject_kind": r.subject_kind},
    } for r in result.rules]
    index = {r.id: i for i, r in enumerate(result.rules)}
    rank = {"error": 0, "warning": 1, "info": 2}
    kept = sorted(result.violations, key=lambda v: rank.get(v.severity, 3))[:max_results]
    left_out = len(result.violations) - len(kept)
    results = [{
        "ruleId": v.rule, "ruleIndex": index[v.rule], "level": SARIF_LEVELS[v.severity],
        "message": {"text": f"{v.subject}: {v.message}"},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": quote(str(v.file), safe="/"), "uriBaseId": "BRAINROOT"},
            "region": {"startLine": v.line or 1}}}],
        "properties": {"subject_kind": v.subject_kind, "subject": v.subject, "at": v.at,
                       "evidence": v.evidence, "spec": v.spec},
    } for v in kept]
    notes = [{"level": "note", "associatedRule": {"id": r.id},
              "message": {"text": f"{r.id} not evaluated: it reads transcripts "
                                  "(give --db DB)."}} for r in result.not_evaluated]
    if left_out:  # said in the log, errors kept first
        notes.append({"level": "warning", "message": {"text": (
            f"{left_out} of {len(result.violations)} results left out: code scanning accepts "
            f"{max_results:,} per run (errors, then warnings, kept); `brainlab check --format "
            "json` lists all.")}})
    log = {
        "$schema": SARIF_SCHEMA, "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "brainlab", "version": __version__,
                                "rules": rules}},
            "originalUriBaseIds": {"BRAINROOT": {"uri": result.root.as_uri() + "/"}},
            "results": results,
            # rules that read transcripts, not run without --db: said, not silently dropped
            "invocations": [{"executionSuccessful": True,
                             "toolExecutionNotifications": notes + _unreadable(result)}],
        }],
    }
    return json_safe(json.dumps(log, indent=2, ensure_ascii=False))


def _unreadable(result: CheckResult) -> list[dict]:
    """One error notification per file that could not be read (it was not checked)."""
    return [{"level": "error",
             "message": {"text": f"{file}: could not be read, skipped: {reason}"},
             "locations": [{"physicalLocation": {
                 "artifactLocation": {"uri": quote(str(file), safe="/"), "uriBaseId": "BRAINROOT"},
                 "region": {"startLine": line or 1}}}]}
            for file, line, reason in result.parse_problems]
