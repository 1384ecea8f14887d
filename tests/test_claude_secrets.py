"""No secret from a transcript reaches the database file or its exports (SPEC §7).

The transcript below carries 34 secret-shaped strings in every place a line can hold them:
prompts, tool results, Bash commands, Grep patterns, file paths, cwd, Write contents, .env
files, a subagent .meta.json, an invalid JSON line. After ingest the raw bytes of the .duckdb
file (CHECKPOINTed, strings stored uncompressed so a byte scan can see them), a CSV export and
the CLI's outputs must contain none of them, while a canary path is found (the scan works).
"""

import json
import random
import string

from claude_factory import assistant, tool_use, usage, user, write
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brainlab.cli import main
from brainlab.sources import redact as redact_module
from brainlab.store import open_writer
from brainlab.transcripts.ingest import ingest_claude

RNG = random.Random(42)


def rand(n, alphabet=string.ascii_letters + string.digits):
    return "".join(RNG.choice(alphabet) for _ in range(n))


UP = string.ascii_uppercase + string.digits
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
       + rand(43))
SECRETS = [
    "sk-ant-api03-" + rand(60), "sk-proj-" + rand(48), "sk-" + rand(48),
    "AKIA" + rand(16, UP), "ASIA" + rand(16, UP), "AIza" + rand(35),
    "ghp_" + rand(36), "gho_" + rand(36), "ghs_" + rand(36),
    "github_pat_" + rand(22) + "_" + rand(59), "glpat-" + rand(20),
    "xoxb-" + rand(12, string.digits) + "-" + rand(24), "xoxp-" + rand(12, string.digits) + "-"
    + rand(30), "hooks.slack.com/services/T" + rand(8, UP) + "/B" + rand(8, UP) + "/" + rand(24),
    JWT, "sk_live_" + rand(24), "rk_test_" + rand(24), "npm_" + rand(36), "hf_" + rand(34),
    "SG." + rand(22) + "." + rand(43),
    "S3cr3t" + rand(10),        # password in a postgres URL
    "Pw" + rand(14),            # password in an https URL
    "Bearer-" + rand(30),       # bearer token value
    "hunter2" + rand(8),        # DATABASE_PASSWORD in .env
    "envval" + rand(12),        # MY_CUSTOM_SETTING in .env
    "wJalrXUtnFEMI/K7MDENG/" + rand(18),  # aws_secret_access_key
    "corr3ct" + rand(10),       # password: "..."
    "tok_" + rand(24),          # API_TOKEN=
    rand(20) + "ssh",           # body of an OpenSSH private key block
    rand(20) + "rsa",           # body of an RSA private key block
    "xoxa-2-" + rand(20), "AGPA" + rand(16, UP), "ghu_" + rand(36), "ghr_" + rand(36),
]
assert len(SECRETS) >= 30


def shaped(i, secret):
    """Put secret i in the context where such a secret occurs."""
    return {
        20: f"postgres://app:{secret}@db.internal:5432/prod",
        21: f"https://admin:{secret}@example.com/repo.git",
        22: f"curl -H 'Authorization: Bearer {secret}' https://api.example.com",
        23: f"DATABASE_PASSWORD={secret}",
        24: f"MY_CUSTOM_SETTING={secret}",
        25: f"aws_secret_access_key = {secret}",
        26: f'password: "{secret}"',
        27: f"API_TOKEN={secret}",
        28: f"-----BEGIN OPENSSH PRIVATE KEY-----\n{secret}\n-----END OPENSSH PRIVATE KEY-----",
        29: f"-----BEGIN RSA PRIVATE KEY-----\n{secret}\n-----END RSA PRIVATE KEY-----",
    }.get(i, secret)


def build(root):
    s = "sess-secret"
    proj = root / "projects" / "-home-u-secret"
    lines, ts = [], "2026-06-01T10:{:02d}:{:02d}.000Z"
    for i, secret in enumerate(SECRETS):
        text = shaped(i, secret)
        t = ts.format(i // 60, i % 60)
        calls = [tool_use(f"b{i}", "Bash", command=f"{text} && echo done"),
                 tool_use(f"g{i}", "Grep", pattern=text, path=f"/srv/{text}"),
                 tool_use(f"w{i}", "Write", file_path=f"/home/u/{text}.env",
                          content=f"{text}\n"),
                 tool_use(f"f{i}", "WebFetch", url=f"https://x.io/?k={secret}")]
        lines.append(user(s, t, text=f"please use {text}"))
        lines.append(assistant(s, t, f"m{i}", f"r{i}", usage(1, 1), content=calls,
                               cwd=f"/home/u/{text}"))
        lines.append(user(s, t, results=[(f"b{i}", f"output: {text}"),
                                         (f"g{i}", text)]))
    lines.append(json.dumps({"type": "user", "sessionId": s, "message": SECRETS[0]})[:-5])
    lines.append({"type": "summary", "summary": " ".join(SECRETS)})
    lines.append({"type": "assistant", "sessionId": s, "timestamp": ts.format(59, 0),
                  "message": {"id": "mz", "model": "claude-opus-4-5",
                              "content": [tool_use("canary", "Read",
                                                   file_path="/home/u/agents/canary-agent.md")],
                              "usage": usage(1, 1)}})
    write(proj / f"{s}.jsonl", lines)
    sub = proj / s / "subagents"
    write(sub / "agent-x1.jsonl", [assistant(s, ts.format(58, 0), "mx", "rx", usage(1, 1),
                                             agent="x1", content=[tool_use(
                                                 "tx", "Bash", command=shaped(23, SECRETS[23]))])])
    (sub / "agent-x1.meta.json").write_text(json.dumps({"agentType": SECRETS[6]}))
    return root


def test_no_secret_in_database_bytes_or_exports(tmp_path):
    root = build(tmp_path / "cfg")
    db = tmp_path / "b.duckdb"
    con = open_writer(db)
    con.execute("SET force_compression = 'uncompressed'")  # so a byte scan sees every string
    summary = ingest_claude(con, root)
    assert summary.rows > 100
    assert con.execute("SELECT count(*) FROM cc_tool_calls WHERE tool = 'Bash'").fetchone()[0] \
        == len(SECRETS) + 1
    con.execute("CHECKPOINT")
    con.close()  # the ingest sealed its writer (issue 46 item 4): export on a fresh one
    export = tmp_path / "export"
    con = open_writer(db)
    con.execute(f"EXPORT DATABASE '{export}' (FORMAT csv)")
    con.close()

    blobs = {"db": db.read_bytes()}
    wal = db.with_name(db.name + ".wal")
    if wal.exists():
        blobs["wal"] = wal.read_bytes()
    for f in export.iterdir():
        blobs[f.name] = f.read_bytes()
    runner = CliRunner()
    for args in (["usage", "sessions", "--json"], ["errors"],
                 ["sql", "SELECT command, pattern, file_path FROM cc_tool_calls"],
                 ["sql", "SELECT * FROM cc_sessions"]):
        result = runner.invoke(main, [*args, "--db", str(db)])
        assert result.exit_code == 0, result.output
        blobs[" ".join(args)] = result.output.encode()

    assert b"/home/u/agents/canary-agent.md" in blobs["db"]  # the scan can see stored text
    leaks = [(i, where) for i, secret in enumerate(SECRETS) for where, blob in blobs.items()
             if secret.encode() in blob]
    assert leaks == []
    # redaction keeps what analysis needs
    kept = open_writer(db).execute(
        "SELECT command FROM cc_tool_calls WHERE tool_use_id = 'b23'").fetchone()[0]
    assert kept == "DATABASE_PASSWORD=[REDACTED:secret-assignment] && echo done"


_FRAGMENTS = SECRETS + [shaped(i, s) for i, s in enumerate(SECRETS)] + [
    "/home/user/projets/app", "claude-opus-4-5-20251101", "msg_01ABCdef", "k00msg_01ABCdef",
    " ", "=", ":", "://", "@", '"', "BEARER ", "bearer ", "KEY", "token", "export ", "\n",
    "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "[REDACTED:jwt]",
    "sk-", "_live_", "AKIA", "eyJ", "SG.", "xox", "hf_", "npm_", "ghp_", "glpat-", "AIza", "é",
    "pa\u017f\u017fword", "\u212aey", "\u0130d_token", "AUTH", "Session", "x_dsn", "salt",
    "MY_PASSWD", " = ", ": ", "'", ";", "aws_secret_access_key",
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=30)), max_size=8))
def test_needle_prefilter_redacts_exactly_as_every_rule(parts):
    """The prefilter (a rule runs only when a literal it needs is present) changes nothing."""
    text = "".join(parts)
    assert redact_module._redact(text) == redact_module._redact_every_rule(text)


def test_every_secret_is_caught_through_the_prefilter():
    for i, secret in enumerate(SECRETS):
        text = shaped(i, secret)
        assert redact_module._redact(text) == redact_module._redact_every_rule(text)
        assert secret not in redact_module._redact(text), (i, text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=30)), max_size=8))
def test_each_rule_prefilter_finds_exactly_its_literals(parts):
    """A rule is skipped only when none of its hint's substrings is in the text (one scan)."""
    from brainlab.sources.secret_rules import RULES

    text = "".join(parts)
    lowered = text.lower()
    for rule in RULES:
        haystack = lowered if rule.nocase else text
        assert rule.may_apply(text, lowered) == any(h in haystack for h in rule.hint), rule.kind
