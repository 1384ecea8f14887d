"""Issue 47 item 3: the redactor's grammar, as general rules rather than one pattern per string.

Paired key id / secret written side by side; quoted and unquoted multi-word passwords; what
a secret-bearing flag receives through the shell (here-strings, here-documents, process and
command substitutions: the printed words go, a shell operator is never the value, a file
name stays); each with negatives that must stay, and hostile texts for the new rules.
"""

from __future__ import annotations

import gc

import pytest

from brainlab.sources.redact import _redact, redact
from tests.test_redact_rules import GROWTH, _grows_linearly

AK, SK = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
ASIA, SK2 = "ASIAY34FZKBOKMUTVV7A", "9drTJvcXLB89EXAMPLELB8923FB892xMFI"
PW = "Zq8rTx9LmN3vB"

# (text, the secret(s) that must be gone)
GONE = [
    # paired key id and secret: after a blank, a tab, a comma, a colon, a pipe, a name
    (f"{AK} {SK}", [SK]),
    (f"creds: {ASIA}\t{SK2} (temporary)", [SK2]),
    (f"{AK},{SK}", [SK]), (f"{AK}:{SK}", [SK]), (f"'{AK}' | '{SK}'", [SK]),
    (f"aws_access_key_id {AK} aws_secret_access_key {SK}", [SK]),
    (f"AWS_ACCESS_KEY_ID {ASIA} AWS_SECRET_ACCESS_KEY {SK2}", [SK2]),
    (f"aws_access_key_id={AK} aws_secret_access_key={SK}", [SK]),
    (f"aws_access_key_id: '{AK}' aws_secret_access_key: \"{SK}\"", [SK]),
    (f"AccessKeyId {AK} SecretAccessKey {SK}", [SK]),
    (f'{{"AccessKeyId": "{ASIA}", "SecretAccessKey": "{SK2}"}}', [SK2]),
    (f"key id {AK}, secret {SK}", [SK]),
    ("password: `hunter2abc` (markdown)", ["hunter2abc"]),
    # multi-word passwords: quoted after any secret name; unquoted after a password name and `:`
    ('pass: "correct horse battery staple"', ["correct", "horse", "battery", "staple"]),
    ("password='two words'", ["two", "words"]),
    ("client_secret: 'lazy brown fox'", ["lazy", "brown", "fox"]),
    ("kubectl create secret generic db --from-literal=password='s3cr3t pass'", ["s3cr3t"]),
    ("pass: correct horse battery staple", ["correct", "horse", "battery", "staple"]),
    ("my wifi passphrase: correct horse battery staple", ["horse", "staple"]),
    ("Password : hunter two three\nnext", ["hunter", "two", "three"]),
    ("pass: correct horse battery staple user: bob", ["horse", "staple"]),
    # what a secret-bearing flag receives through the shell
    (f"gh auth login --with-token < <(echo {PW})", [PW]),
    (f"az login -u http://app --password < <(printf '%s\\n' {PW}) --tenant t", [PW]),
    (f"tool --token <<< {PW}", [PW]), (f"tool --token <<< '{PW}'", [PW]),
    (f"tool --token=$(echo {PW})", [PW]), (f'tool --token "$(echo {PW})"', [PW]),
    (f"tool --token `echo {PW}`", [PW]), (f"curl --oauth2-bearer $(echo {PW}) https://x", [PW]),
    (f"docker login --password-stdin <<EOF\n{PW}\nEOF\nls", [PW]),
    (f"echo {PW} | docker login -u bob --password-stdin", [PW]),
    (f"printf '%s' {PW} | gh auth login --with-token", [PW]),
    (f"TOKEN=$(echo {PW})", [PW]), (f"export API_KEY=`printf '%s' {PW}`", [PW]),
    (f"vault login username=bob password=$(echo {PW})", [PW]),
    # prose: `is` / `was` between the name and the value
    ("the password is hunter2abc", ["hunter2abc"]),
    (f"my AWS key is {AK} and the secret is {SK}", [AK, SK]),
]

# (text, what must stay as it is)
KEPT = [
    ("mysql --password < /secret/pw.txt", "/secret/pw.txt"),
    ("tool --token=$(cat f)", "--token=$(cat f)"),
    ("tool --token $(cat ~/.tok)", "$(cat ~/.tok)"),
    ("mysql -u root --password=$(cat /run/secrets/db) app", "$(cat /run/secrets/db) app"),
    ("TOKEN=$(cat f)", "TOKEN=$(cat f)"),
    ("gh auth login --with-token < token.txt", "< token.txt"),
    ("tool --token <<< $TOKEN", "<<< $TOKEN"),
    ("pass: 3 tests", "pass: 3 tests"), ("passed: 12 of 14", "passed: 12 of 14"),
    ("tokens abc123xyz", "tokens abc123xyz"), ("Tokens abc123xyz", "Tokens abc123xyz"),
    ("the secret ingredient is love", "the secret ingredient is love"),
    ("the token budget was exceeded again today", "the token budget was exceeded again today"),
    ("DATABASE_PASSWORD=x1y2z3w4 && echo done", "&& echo done"),
    (f"{AK} created on 2024-01-01 by admin", "created on 2024-01-01 by admin"),
    (f"{AK} EXAMPLEKEYNAMEFORDOCS", "EXAMPLEKEYNAMEFORDOCS"),  # no digit: not a secret
    ("passphrase: correct horse, user: bob", ", user: bob"),
    ("the token is expired", "the token is expired"), ("password is 12345678", "12345678"),
    ("PWD=$(shell pwd)", "PWD=$(shell pwd)"), ("--- PASS: TestFoo (0.01s)", "(0.01s)"),
]


@pytest.mark.parametrize(("text", "secrets"), GONE, ids=[t[:40] for t, _ in GONE])
def test_each_shape_is_redacted(text, secrets):
    out = redact(text)
    assert "[REDACTED:" in out
    assert [s for s in secrets if s in out] == [], out


@pytest.mark.parametrize(("text", "kept"), KEPT, ids=[t[:40] for t, _ in KEPT])
def test_what_the_flag_does_not_receive_and_prose_stay(text, kept):
    assert kept in redact(text)


def test_a_shell_operator_is_never_the_value():
    for text in ("x --token < <(echo a1b2c3d4e5)", "x --password <<< a1b2c3d4e5",
                 "x --token=$(echo a1b2c3d4e5)", "x --password < f.txt"):
        out = redact(text)
        assert "[REDACTED:flag-value] <" not in out and "=[REDACTED:flag-value] " not in out
        assert "<" in out or "$(" in out, out


def test_new_rules_are_linear_on_hostile_texts():
    """The paired, multi-word and shell-input rules on repeated openings that never close."""
    def texts(n):
        return [f"{AK} " * (n // 21), "--token <<EOF\n" * (n // 14), "--token < <(echo " * (n // 17),
                "echo x | " * (n // 9) + "--password-stdin", "pass: a " * (n // 8),
                "pass: " + "word " * (n // 5), "--token=$(echo " * (n // 15),
                "[REDACTED:aws-access-key] " * (n // 26), "aws_secret_access_key " * (n // 22)]
    small, large = texts(20_000), texts(GROWTH * 20_000)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for text in small:
            _redact(text)
        slow = [a[:20] for a, b in zip(small, large, strict=True) if not _grows_linearly(_redact, a, b)]
    finally:
        if enabled:
            gc.enable()
    assert not slow, slow
