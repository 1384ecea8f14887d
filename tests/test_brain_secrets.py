"""Issue 10 §13-14: no secret planted in a brain file reaches the database, an export or the CLI.

Secrets are pasted where people paste them: a metabolism log's notes, signals, header and an
unrecognised header line (which becomes an error row quoting it), a claim's scope, a handoff's
frontmatter and title, a workspace README and decision log, a context description, an agent's
frontmatter, a broker exclusion reason, a sprint record and a circuit journal. After ingest the
raw bytes of the .duckdb file (uncompressed, CHECKPOINTed), an EXPORT DATABASE and the CLI's
outputs must hold none of them, while the surrounding text is still there.
"""

import random
import string

from click.testing import CliRunner
from conftest import write

from brainlab.cli import main
from brainlab.store import ingest, open_writer, query

RNG = random.Random(10)


def rand(n, alphabet=string.ascii_letters + string.digits):
    return "".join(RNG.choice(alphabet) for _ in range(n))


SECRETS = {
    "pypi": "pypi-AgEIcHlwaS5vcmc" + rand(80),
    "slack": "xoxb-" + rand(12, string.digits) + "-" + rand(24),
    "github": "ghp_" + rand(36),
    "anthropic": "sk-ant-api03-" + rand(60),
    "aws": "AKIA" + rand(16, string.ascii_uppercase + string.digits),
    "mysql": "My5ql" + rand(10),
    "sudo": "Sud0" + rand(10),
    "assign": "hunter2" + rand(8),
    "url": "S3cr3t" + rand(10),
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0." + rand(43),
    "stripe": "sk_live_" + rand(24),
    "hf": "hf_" + rand(34),
}
S = SECRETS


def plant(brain):
    write(brain, "progression/metabolism/2026-01-05-sess-20260105-0900-work.md",
          "# Metabolism — 2026-01-05 — sess-20260105-0900-work\n\n| Clé | Valeur |\n|---|---|\n"
          f"| type | work |\n| commits | 2 |\n| deploy_key | {S['github']} |\n\n"
          f"api {S['aws']} pasted here\n\n## Signaux\n- ran `mysql -u root -p{S['mysql']} db`\n"
          f"\n## Notes\nPublished with twine -p {S['pypi']} (oops)\n"
          f"echo '{S['sudo']}' | sudo -S systemctl restart x\n")
    write(brain, "claims/sess-20260105-0900-work.yml",
          f"sess_id: sess-20260105-0900-work\nstatus: open\nopened_at: 2026-01-05T09:00:00\n"
          f"scope: \"deploy with {S['slack']}\"\n")
    write(brain, "handoffs/2026-01-05-work.md",
          f"---\nsess_id: sess-20260105-0900-work\napi_token: {S['anthropic']}\n---\n"
          f"# Handoff with {S['hf']}\n")
    write(brain, "workspace/shop-s1/README.md", f"- ttl: 48h\n- mode: password={S['assign']}\n")
    write(brain, "workspace/shop-s1/log.md",
          f"2026-01-05 | db url? | choisi: postgres://app:{S['url']}@db/x | raison: {S['jwt']}\n")
    write(brain, "contexts/session-work.yml", f"description: uses {S['stripe']}\nL0: [a.md]\n")
    write(brain, "agents/dev.md", f"---\nname: {S['github']}\ncontext_tier: hot\n---\n# Dev\n")
    write(brain, "progression/broker/2026-01-05-s1.md",
          "Context-broker — inhale sprint s1\nProjet détecté : shop\nSource map :\n"
          "  dev → [\"a.ts\"]\nExclusions explicites :\n"
          f"  \"b.ts\" — holds {S['slack']}\n")
    write(brain, "progression/sprints/s.jsonl",
          '{"sprint": "s1", "project": "shop", "agent": "dev", "domain": "auth",'
          f' "referenced": ["a.ts?token={S["assign"]}"]}}\n')
    write(brain, "circuits/t.jsonl",
          '{"ticket": "T1", "ts": "2026-01-05T10:00:00Z", "event": "admission", "accepted": false,'
          f' "reason": "key {S["aws"]}"}}\n')
    return brain


def test_no_brain_secret_in_database_export_or_cli(brain, tmp_path):
    plant(brain)
    db = tmp_path / "b.duckdb"
    con = open_writer(db)
    con.execute("SET force_compression = 'uncompressed'")  # so a byte scan sees every string
    summary = ingest.ingest_brain(con, brain)
    assert sum(summary.rows.values()) >= 12
    con.execute("CHECKPOINT")
    export = tmp_path / "export"
    con.execute(f"EXPORT DATABASE '{export}' (FORMAT csv)")
    con.close()
    blobs = {"db": db.read_bytes()}
    for f in export.iterdir():
        blobs[f.name] = f.read_bytes()
    runner = CliRunner()
    for args in (["errors"], ["sql", "SELECT * FROM raw_metabolism_logs"],
                 ["sql", "SELECT * FROM broker_block_files"], ["sql", "SELECT * FROM decisions"]):
        result = runner.invoke(main, [*args, "--db", str(db)])
        assert result.exit_code == 0, result.output
        blobs[" ".join(args)] = result.output.encode()
    assert b"pasted here" in blobs["db"] and b"Published with twine" in blobs["db"]
    leaks = sorted({name for name, secret in SECRETS.items() for blob in blobs.values()
                    if secret.encode() in blob})
    assert leaks == []
    notes = query(db, "SELECT notes FROM raw_metabolism_logs").notes[0]
    assert "[REDACTED:pypi-token]" in notes and "[REDACTED:sudo-password]" in notes
