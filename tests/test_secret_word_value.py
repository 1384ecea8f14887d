"""Issue 29: a secret word then a blank then a credential-shaped value (`token hunter2abc`),
with no `=`/`:` between, is redacted; prose after the same words is kept (`token budget
exceeded`). Also through a broker block's exclusion reason into the store."""

import pytest
from conftest import write

from brainlab.sources.redact import redact
from brainlab.store import ingest, open_writer, query

M = "[REDACTED:secret-word-value]"

REDACTED = [  # (text, expected)
    ("token hunter2abc", f"token {M}"),
    ("excluded: token Xk9!mQ2zp leaked", f"excluded: token {M} leaked"),
    ("the password is hunter2abc", f"the password is {M}"),  # `is` skipped (issue 47)
    ("password Sup3rS3cret!", f"password {M}"),
    ("passwd q8Vn3LmZ0", f"passwd {M}"),
    ("PWD hunter2abc.", f"PWD {M}."),
    ("passphrase c0rrectHorse9", f"passphrase {M}"),
    ("API key Zq8vLm3nPw now", f"API key {M} now"),
    ("secret\tab12CD34ef, then", f"secret\t{M}, then"),
]
KEPT = [  # prose after a secret word: not a credential
    "token budget exceeded",
    "token count 200000",
    "secret sauce recipe",
    "password policy v2",
    "password reset-flow",
    "token claude-3-opus pricing",  # words and numbers joined: a name
    "password file1.txt",  # a file name
    "token aaaa1111",  # low entropy
    "Tokens abc12345xyz",  # `tokens` is a count
    "tokenizer Xk9mQ2zp1",  # not the word token
    "token long-lived-session",
    "the **token price.**",  # markdown bold around a word
]


@pytest.mark.parametrize(("text", "expected"), REDACTED)
def test_secret_word_value_is_redacted(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("text", KEPT)
def test_prose_after_a_secret_word_is_kept(text):
    assert redact(text) == text


def test_broker_exclusion_reason_with_token_value_never_stored(brain, tmp_path):
    secret = "hunter2abcQ9"
    write(brain, "progression/broker/2026-01-05-s1.md",
          "Context-broker — inhale sprint s1\nProjet détecté : shop\nSource map :\n"
          "  dev → [\"a.ts\"]\nExclusions explicites :\n"
          f"  \"b.ts\" — token {secret} inside\n  \"c.ts\" — token budget exceeded\n")
    db = tmp_path / "b.duckdb"
    con = open_writer(db)
    con.execute("SET force_compression = 'uncompressed'")
    ingest.ingest_brain(con, brain)
    con.execute("CHECKPOINT")
    con.close()
    assert secret.encode() not in db.read_bytes()
    reasons = set(query(db, "SELECT reason FROM broker_block_files WHERE reason IS NOT NULL"
                        ).reason)
    assert reasons == {f"token {M} inside", "token budget exceeded"}
