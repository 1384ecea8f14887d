"""Issue 29 (Secrets): the 29 shapes redaction missed, table-driven over redact(), every VARCHAR
column of every table of an ingested store, the lake an export writes and the CLI's outputs.

Each case is (id, text holding the secret, the secret). The secrets follow each vendor's
published format, so the rules from detect-secrets, gitleaks' rule list and brainlab's own
command-line grammar are what is exercised, not a test-only shortcut.
"""

import json
import random
import string
import subprocess
import sys

import duckdb
import pytest
from claude_factory import assistant, tool_use, usage, user, write
from conftest import cli_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brainlab.sources.gitleaks_rules import DATA_SHA256, GITLEAKS_VERSION, data_digest
from brainlab.sources.redact import redact
from brainlab.sources.secret_rules import RULES

RNG = random.Random(29)
HEX = "0123456789abcdef"
UP = string.ascii_uppercase + string.digits


def rand(n, alphabet=string.ascii_letters + string.digits):
    return "".join(RNG.choice(alphabet) for _ in range(n))


def pw():
    return "Pw" + rand(12) + "9"


_AGE = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
CASES = [(name, template.format(s=secret), secret) for name, template, secret in [
    ("docker-login-p", "docker login -u bob -p {s} registry.example.com", pw()),
    ("sshpass-p", "sshpass -p {s} ssh deploy@host", pw()),
    ("az-login-p", "az login -u bob@example.com -p {s}", pw()),
    ("mysql-password-space", "mysql --password {s} -h db shop", pw()),
    ("token-flag", "mycli deploy --token {s} --yes", pw()),
    ("apikey-flag", "client --apiKey {s}", pw()),
    ("auth-token-flag", "ngrok config add --auth-token {s}", pw()),
    ("with-api-key-flag", "tool login --with-api-key {s}", pw()),
    ("http-password-flag", "wget --http-user=bob --http-password {s} https://x.io/f", pw()),
    ("htpasswd-b", "htpasswd -b /etc/nginx/.htpasswd bob {s}", pw()),
    ("aws-configure-set", "aws configure set aws_secret_access_key {s}", rand(40)),
    ("authorization-basic", "curl -H 'Authorization: Basic {s}' https://x.io",
     "dXNlcjpw" + rand(16)),
    ("curl-u", "curl -u bob:{s} https://api.example.com", pw()),
    ("redis-empty-user", "redis-cli -u redis://:{s}@cache:6379/0", pw()),
    ("github-hex-userinfo", "git clone https://{s}@github.com/org/repo.git", rand(40, HEX)),
    ("value-with-semicolon", "PASSWORD={s}", "Ab1;" + rand(10)),
    ("ghp-after-letters", "export TOKENVALUEghp_{s}", rand(36)),
    ("aws-secret-glued", "AKIA" + rand(16, string.ascii_uppercase) + "{s}",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("multi-word-passphrase", "passphrase: {s}", "correct horse battery " + rand(8)),
    ("vault-hvs", "VAULT {s}", "hvs.CAESI" + rand(90)),
    ("digitalocean", "doctl auth init -t {s}", "dop_v1_" + rand(64, HEX)),
    ("databricks", "databricks {s}", "dapi" + rand(32, HEX)),
    ("atlassian", "jira {s}", "ATATT3xFfGF0" + rand(180) + "=" + rand(8, UP)),
    ("grafana", "grafana {s}", "glsa_" + rand(32) + "_" + rand(8, HEX)),
    ("new-relic", "newrelic {s}", "NRAK-" + rand(27, UP)),
    ("postman", "postman {s}", "PMAK-" + rand(24, HEX) + "-" + rand(34, HEX)),
    ("age", "age {s}", "AGE-SECRET-KEY-1" + "".join(RNG.choice(_AGE) for _ in range(58))),
    ("sentry", "sentry {s}", "sntrys_eyJpYXQiOjE3MDAwMDAwMDAuMCwidXJsIjoiaHR0cHM6Ly9zZW50cnku"
     "aW8iLCJyZWdpb25fdXJsIjoiaHR0cHM6Ly91cy5zZW50cnkuaW8iLCJvcmciOiJ4In0=_" + rand(43)),
    ("pulumi", "pulumi login {s}", "pul-" + rand(40, HEX)),
    ("mailgun", "mailgun {s}", "key-" + rand(32, HEX)),
    ("heroku", "heroku {s}", "HRKU-AA" + rand(58)),
]]
assert len(CASES) >= 29


@pytest.mark.parametrize("name, text, secret", CASES, ids=[c[0] for c in CASES])
def test_each_shape_is_redacted(name, text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out, out
    for part in secret.split(" ")[1:]:  # no word of a passphrase kept
        assert part not in out


def test_what_analysis_needs_is_kept_around_the_new_rules():
    for text in ("mkdir -p /tmp/x && ls -la", "ssh -p 2222 host", "ls --color auto",
                 "pytest -p no:cacheprovider tests", "git log --format %H", "docker ps -a",
                 "export X=abc; ls", "tokens_used: number too large to store: '1e400'"):
        assert redact(text) == text
    # the field a warning is about stays readable (was `tokens_used: [REDACTED:...] too large`)
    assert redact("tokens_used: number too large").startswith("tokens_used: number")


def test_gitleaks_rules_come_from_the_vendored_release():
    assert data_digest() == DATA_SHA256  # an update of the data file updates the version too
    used = [r for r in RULES if r.origin.startswith(f"gitleaks {GITLEAKS_VERSION} ")]
    assert len(used) > 150
    for rule in used:
        assert rule.pattern  # every used rule compiles in Python


def _transcript(root):
    s = "sess-shapes"
    lines, ts = [], "2026-06-01T10:{:02d}:{:02d}.000Z"
    for i, (_, text, _) in enumerate(CASES):
        t = ts.format(i // 60, i % 60)
        lines.append(user(s, t, text=f"run {text}"))
        lines.append(assistant(s, t, f"m{i}", f"r{i}", usage(1, 1), content=[
            tool_use(f"b{i}", "Bash", command=text),
            tool_use(f"g{i}", "Grep", pattern=text, path="/srv/app")], cwd=f"/srv/{text}"))
    write(root / "projects" / "-srv-app" / f"{s}.jsonl", lines)


def _strings(con, tables_sql):
    """Every value of every VARCHAR column of every table ``tables_sql`` lists."""
    found = []
    for table, column in con.execute(tables_sql).fetchall():
        found += [v for (v,) in con.execute(
            f'SELECT DISTINCT "{column}" FROM "{table}" WHERE "{column}" IS NOT NULL')
            .fetchall()]
    return found


def _leaks(blobs):
    return sorted({(name, where) for name, _, secret in CASES for where, blob in blobs.items()
                   if any(part in blob for part in [secret, *secret.split(" ")[1:]])})


def test_no_shape_in_any_stored_column_the_lake_or_an_output(tmp_path):
    _transcript(tmp_path / "cfg")
    db, lake = tmp_path / "b.duckdb", tmp_path / "lake"
    env = cli_env(tmp_path)

    def cli(*args):
        done = subprocess.run([sys.executable, "-m", "brainlab.cli", *args], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    cli("ingest", "claude", str(tmp_path / "cfg" / "projects"), "--db", str(db))
    cli("export", "--db", str(db), "--lake", str(lake), "--user", "u", "--machine", "m")
    con = duckdb.connect(str(db), read_only=True)
    stored = _strings(con, "SELECT table_name, column_name FROM information_schema.columns c"
                           " JOIN duckdb_tables() t USING (table_name)"
                           " WHERE data_type = 'VARCHAR'")
    commands = con.execute("SELECT count(*) FROM cc_tool_calls WHERE tool = 'Bash'").fetchone()
    con.close()
    assert commands[0] == len(CASES)
    blobs = {"store": "\n".join(stored)}
    lcon = duckdb.connect()
    for path in sorted(lake.rglob("*.parquet")):
        rows = lcon.execute("SELECT * FROM read_parquet(?)", [str(path)]).fetchall()
        blobs[f"lake {path.relative_to(lake)}"] = "\n".join(
            v for row in rows for v in row if isinstance(v, str))
    assert any(k.startswith("lake cc_tool_call_lines") for k in blobs)
    query = "SELECT command, pattern FROM cc_tool_calls"
    blobs["sql text"] = cli("sql", query, "--db", str(db))
    blobs["usage json"] = cli("usage", "sessions", "--json", "--db", str(db))
    blobs["errors"] = cli("errors", "--db", str(db))
    assert "docker login -u bob -p [REDACTED:flag-value]" in blobs["store"]  # the scan sees
    assert _leaks(blobs) == []
    json.loads(blobs["usage json"])


_HINTS = sorted({h for r in RULES for h in r.hint})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_HINTS), st.text(max_size=12)), max_size=10))
def test_the_one_scan_finds_exactly_the_hints_a_text_holds(parts):
    """hints_present (a trie scan plus `in` tests for overlaps) equals testing every hint."""
    from brainlab.sources.secret_rules import CASED_HINTS, NOCASE_HINTS, hints_present

    text = "".join(parts)
    cased, nocase = hints_present(text, text.lower())
    assert cased == {h for h in CASED_HINTS if h in text}
    assert nocase == {h for h in NOCASE_HINTS if h in text.lower()}


FOLDER_TOKEN = "ghp_" + "".join(random.Random(29).choices(string.ascii_letters + string.digits,
                                                            k=36))
FILE_TOKEN = "glpat-" + "".join(random.Random(30).choices(string.ascii_letters, k=20))


def test_a_token_in_a_folder_or_file_name_is_in_no_stored_column(tmp_path):
    """Issue 29: paths are stored redacted (each component) in every source_file column, and
    incremental ingest still matches the file by that form (the second run reads nothing)."""
    folder = tmp_path / "cfg" / "projects" / f"-srv-{FOLDER_TOKEN}-app"
    s, t = "sess-path", "2026-06-01T10:00:00.000Z"
    write(folder / f"{s}.jsonl", [user(s, t, text="hi"),
                                  assistant(s, t, "m1", "r1", usage(1, 1)), "{not json"])
    write(folder / s / "subagents" / f"agent-{FILE_TOKEN}.jsonl",
          [assistant(s, t, "m2", "r2", usage(1, 1))])
    db = tmp_path / "b.duckdb"
    env = cli_env(tmp_path)
    for _ in range(2):
        done = subprocess.run([sys.executable, "-m", "brainlab.cli", "ingest", "claude",
                               str(tmp_path / "cfg" / "projects"), "--db", str(db)],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    con = duckdb.connect(str(db), read_only=True)
    stored = _strings(con, "SELECT table_name, column_name FROM information_schema.columns c"
                           " JOIN duckdb_tables() t USING (table_name)"
                           " WHERE data_type = 'VARCHAR'")
    files = con.execute("SELECT source_file, runs FROM cc_files ORDER BY 1").fetchall()
    errors = con.execute("SELECT file FROM ingest_errors").fetchall()
    requests = con.execute("SELECT count(*) FROM cc_request_lines").fetchone()[0]
    con.close()
    assert not [v for v in stored if FOLDER_TOKEN in v or FILE_TOKEN in v]
    assert requests == 2 and errors  # the bad line is an error row naming the redacted file
    assert [runs for _, runs in files] == [1, 1]  # the second run matched both: unchanged
    assert all("[REDACTED:" in path for path, _ in files)
    assert any(path.endswith("-app/sess-path.jsonl") for path, _ in files)  # the rest stays


def test_paths_without_secrets_are_stored_unchanged():
    from brainlab.sources.redact import stored_path

    corpus = __import__("pathlib").Path("/work/shared/corpora/claude-code")
    paths = [str(p) for p in corpus.rglob("*")] or pytest.skip("no corpus")
    assert [p for p in paths if stored_path(p) != p] == []
