"""Issue 47 item 3: brainlab's own words are never redacted; the data quoted in them is, and
is cut to a bounded length with its byte count, wherever a message carries file content
(error rows, ``check`` text, JSON and SARIF)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from conftest import write

from brainlab.rules.check import check
from brainlab.rules.formats import render
from brainlab.sources.messages import QUOTE_MAX_CHARS, Message, bounded, quoted, said
from brainlab.sources.metabolism import MetabolismSource
from brainlab.store.ingest import _parse_safely

BIG = 2_097_152  # a 2 MB line
HEAD = ("# Metabolism — 2026-03-01 — sess-20260301-0800-x\n\n| Clé | Valeur |\n|---|---|\n"
        "| type | work |\n| commits | 2 |\n\n")


def parse(tmp_path: Path, text: str):
    path = write(tmp_path, "progression/metabolism/2026-03-01-sess-20260301-0800-x.md", text)
    return _parse_safely(MetabolismSource(), path, path.read_bytes(), tmp_path)


def test_brainlab_s_own_message_is_kept_word_for_word(tmp_path):
    """On main the redactor made it `key : [REDACTED:secret-assignment] lines`."""
    reasons = [e.reason for e in parse(tmp_path, "# nothing here\n\njust prose\n").errors]
    assert "no metabolism fields found (no key/value table or key : value lines)" in reasons


def test_the_quoted_data_is_redacted_and_the_words_around_it_kept(tmp_path):
    secret = "hunter2" + "Xq9Lm3Zr"
    parsed = parse(tmp_path, HEAD + f"api token {secret} pasted here\n")
    reasons = " ".join(e.reason for e in parsed.errors)
    assert secret not in reasons
    assert "unrecognised line in header: 'api token [REDACTED:secret-word-value] pasted here'" \
        in reasons


def test_a_2mb_line_is_quoted_in_a_bounded_error_row_with_its_byte_count(tmp_path):
    parsed = parse(tmp_path, HEAD + "z" * BIG + "\n")
    [row] = [e.reason for e in parsed.errors if "unrecognised line" in e.reason]
    assert len(row) < QUOTE_MAX_CHARS + 100
    assert f"…({BIG:,} bytes)" in row


def test_said_quoted_and_bounded():
    assert said("key : value lines") == "key : value lines"
    assert isinstance(said("x {}", 1), Message)
    assert said("got {!r}", "password=hunter2Xq9Lm3Zr") == "got 'password=[REDACTED:secret-assignment]'"
    assert said("{:,} bytes", 2_097_152) == "2,097,152 bytes"
    assert said("a {{literal}} {}", "{0}") == "a {literal} {0}"  # data never formats
    assert quoted("é" * 300).endswith("…(600 bytes)")  # UTF-8 bytes, not characters
    assert quoted({"a": {"b": {}}}, as_repr=True) == "a dict of 1 item(s)"
    text = "developer gets 4 sources (max 2): a.ts, " + "x" * BIG + ".ts"
    short = bounded(text)
    assert short.startswith("developer gets 4 sources (max 2): a.ts, xxx")
    assert short.endswith(f"…({BIG + 3:,} bytes)") and len(short) < 400
    assert bounded("short words stay") == "short words stay"


def test_check_text_json_and_sarif_stay_small_on_a_2mb_line(tmp_path):
    """The issue's case: a 2 MB source in a broker block made a 2 MB message, an 8 MB SARIF."""
    write(tmp_path, "progression/broker/2026-03-01-p-core-01.md",
          "Context-broker — inhale sprint p-core-01\n\nProjet détecté : p\n\nSource map :\n"
          f'  developer → ["a.ts", "b.ts", "{"x" * BIG}.ts"]\n')
    result = check(tmp_path, select=["BRK001"])
    [found] = result.violations
    assert f"…({BIG + 3:,} bytes)" in found.message
    for fmt in ("text", "json", "sarif"):
        out = render(result, fmt)
        assert len(out) < 40_000, (fmt, len(out))
        assert f"({BIG + 3:,} bytes)" in out
    json.loads(render(result, "sarif"))


def test_no_source_builds_an_error_reason_from_data_without_said():
    """A reason holding data is made by said(): no f-string, `+` or `%` as `.error(...)`'s reason."""
    root = Path(__file__).parent.parent / "brainlab" / "sources"
    found = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "error" and len(node.args) >= 2 \
                    and isinstance(node.args[1], ast.JoinedStr | ast.BinOp):
                found.append(f"{path.name}:{node.lineno}")
    assert found == []
