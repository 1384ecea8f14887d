"""The secret rule set (issue 10 §13): in sync with detect-secrets, catches the issue's cases,
keeps what analysis needs and runs in linear time on hostile text."""

import gc
import importlib
import inspect
import json
import os
import pkgutil
import random
import re
import string
import subprocess
import sys
import time

import detect_secrets.plugins as plugins
import pytest
from detect_secrets.plugins.base import BasePlugin

from brainlab.sources.redact import _redact, redact, redact_truncate
from brainlab.sources.secret_rules import EXCLUDED_PLUGINS, RULES, USED_PLUGINS

RNG = random.Random(13)


def rand(n, alphabet=string.ascii_letters + string.digits):
    return "".join(RNG.choice(alphabet) for _ in range(n))


def test_every_detect_secrets_plugin_is_used_or_excluded_with_a_reason():
    installed = set()
    for module in pkgutil.iter_modules(plugins.__path__):
        mod = importlib.import_module(f"detect_secrets.plugins.{module.name}")
        for name, cls in inspect.getmembers(mod, inspect.isclass):
            if cls.__module__ == mod.__name__ and issubclass(cls, BasePlugin) \
                    and not inspect.isabstract(cls) and hasattr(cls, "secret_type"):
                installed.add(f"{module.name}.{name}")
    assert installed == set(USED_PLUGINS) | set(EXCLUDED_PLUGINS)
    assert not set(USED_PLUGINS) & set(EXCLUDED_PLUGINS)
    assert {r.origin.split()[-1] for r in RULES if r.origin.startswith("detect-secrets")} == \
        {name.split(".")[1] for name in USED_PLUGINS}


# (text, the secret inside it): the cases first, then one per used plugin shape.
CASES = [
    ("twine upload -u __token__ -p {s}", "pypi-AgEIcHlwaS5vcmc" + rand(90, string.ascii_letters)),
    ("mysql -u root -p{s} shop < dump.sql", "Pw" + rand(12)),
    ("mysqldump -p'{s}' shop", "Pw" + rand(12)),
    ("echo '{s}' | sudo -S apt-get install -y x", "Su" + rand(12)),
    ('echo "{s}" | sudo -S -k whoami', "Su" + rand(12)),
    ("compaction trigger {s}", "xoxb-" + rand(12, string.digits) + "-" + rand(24).lower()),
    ("https://hooks.slack.com/services/T{s}", rand(8, string.ascii_uppercase) + "/B"
     + rand(8, string.ascii_uppercase) + "/" + rand(24)),
    ("exclusion reason: contains {s}", "ghp_" + rand(36)),
    ("GR1348941{s}", rand(24)),
    ("key {s}", "AKIA" + rand(16, string.ascii_uppercase)),
    ('aws_secret = "{s}"', rand(40)),
    ("auth {s}", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0." + rand(43)),
    ("stripe {s}", "sk_live_" + rand(24)),
    ("openai {s}", "sk-proj-" + rand(20) + "T3BlbkFJ" + rand(20)),
    ("mail {s}", "SG." + rand(22) + "." + rand(43)),
    ("square {s}", "sq0csp-" + rand(43)),
    ("DefaultEndpointsProtocol=https;AccountKey={s}", rand(86) + "=="),
    ("git clone https://bob:{s}@example.com/x.git", "Pw" + rand(12)),
    ("artifactory ={s}", "AKC" + rand(20)),
    ("discord {s}", "M" + rand(23) + "." + rand(6) + "." + rand(27)),
    ("mailchimp {s}", rand(32, string.digits + "abcdef") + "-us12"),
    ("bot {s}", rand(9, string.digits) + ":" + rand(35)),
    ("twilio {s}", "AC" + rand(32, string.digits + "abcdef")),
    ("anthropic {s}", "sk-ant-api03-" + rand(40)),
    ("hf {s}", "hf_" + rand(34)),
    ("password: {s}", "hunter2" + rand(6)),
    ("x=password={s}", "hunter2" + rand(6)),
    ('{{"apiKey": "{s}"}}', rand(20)),
    ("-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----", rand(40)),
]


@pytest.mark.parametrize("template, secret", CASES)
def test_each_case_is_redacted(template, secret):
    text = template.format(s=secret)
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out


def test_what_analysis_needs_is_kept():
    for text in ("/home/u/projects/shop/src/auth.routes.ts", "mkdir -p /tmp/x && ls -la",
                 "git commit -m 'fix session timeout'", "sess-20260105-0900-work",
                 "claude-opus-4-5-20251101", "Read", "a3f9c2e1b7d4a3f9c2e1b7d4a3f9c2e1b7d4a3f9"):
        assert redact(text) == text
    assert redact("mysql -u root -p shop") == "mysql -u root -p shop"  # prompts: no password
    assert redact_truncate("DATABASE_PASSWORD=hunter2abc && echo", 30) == \
        "DATABASE_PASSWORD=[REDACTED:se…"


def hostile_texts(n):
    """Texts built to make a backtracking regex re-scan: general ones of ~``n`` characters,
    then every rule's hints repeated or before a blank run (``n // 5``)."""
    m = n // 5
    texts = [" " * n, "a" * n, "-a" * (n // 2), "eyJ" * (n // 3), "xoxb-1" * (n // 6),
             "pypi-AgEIcHlwaS5vcmc" * (n // 20), "key" * (n // 3), "key=" + " " * n + "x",
             "://a:" * (n // 5), "-----BEGIN " + "A" * n, "/" * n + "_authToken=",
             "echo " * (n // 5), "mysql -p" + "'" * n, "A" * n + "=", "1" * n, "aws" * (n // 3),
             "password " + " " * n, "Bearer " * (n // 7), "-p" * (n // 2) + " mysql",
             "AKC" * (n // 3), " AP0" * (n // 4), "M" + "a" * n]
    hints = sorted({hint for rule in RULES for hint in rule.hint})
    return texts + [hint * (m // len(hint)) for hint in hints] + [h + " " * m + "x" for h in hints]


def _cpu(function, text):
    began = time.process_time()
    function(text)
    return time.process_time() - began


GROWTH = 4  # each text measured at n and GROWTH * n characters
LIMIT = 8  # a linear function's CPU grows ~4x (less with fixed costs), a quadratic one's ~16x


def _ratio(function, small, large, tries):
    """The least of ``tries`` CPU times on ``large`` over the least of ``tries`` on ``small``."""
    return min(_cpu(function, large) for _ in range(tries)) / \
        max(min(_cpu(function, small) for _ in range(tries)), 1e-9)


def _grows_linearly(function, small, large, tries=3):
    """Whether ``function``'s CPU time on ``large`` stays under LIMIT times that on ``small``.
    CPU time of this process, a ratio: no wall-clock speed and no machine speed enters it. A
    ratio over the limit is measured again (the least of ``tries`` each), so one noisy sample
    on a busy machine does not fail it; a quadratic function stays ~16x every time."""
    return _ratio(function, small, large, 1) < LIMIT or \
        _ratio(function, small, large, tries) < LIMIT


def test_redaction_is_linear_on_hostile_texts():
    """Each rule on texts built to make a backtracking regex re-scan, at 20k and 80k characters
    (the hints' at 4k and 16k): the CPU of each text grows like its length. Issue 28 item 1:
    this replaced 1 MB texts in a child with a 600 s timeout (14 CPU-s), which caught a
    quadratic rule only if it could not finish in time; here a quadratic one fails at any
    machine speed, as the planted quadratic pattern below shows at the hints' sizes."""
    quadratic = re.compile(r"\s+x")  # each start scans the whole blank run: n**2 / 2 steps
    n = 20_000
    # the least of three samples each, so that a noisy sample cannot make it look linear
    assert _ratio(lambda text: quadratic.sub("", text), " " * (n // 5), " " * (GROWTH * n // 5),
                  3) >= LIMIT
    small, large = hostile_texts(n), hostile_texts(GROWTH * n)
    assert len(small) == len(large) > 100
    enabled = gc.isenabled()
    gc.disable()  # a collection inside one sample is not the text's cost
    try:
        for text in small:
            _redact(text)  # each rule's first use (lazy compiling) off the samples
        slow = [(a[:20], b[:20]) for a, b in zip(small, large, strict=True)
                if not _grows_linearly(_redact, a, b)]
    finally:
        if enabled:
            gc.enable()
    assert not slow, slow


LEADING = {"github": "ghp_" + rand(36), "aws": "AKIA" + rand(16, string.ascii_uppercase),
           "huggingface": "hf_" + rand(34), "gitlab": "glpat-" + rand(20)}
TRAILING = {"openai": "sk-proj-" + rand(40), "anthropic": "sk-ant-api03-" + rand(40),
            "openai-plain": "sk-" + rand(30)}


@pytest.mark.parametrize("lead", sorted(LEADING))
@pytest.mark.parametrize("trail", sorted(TRAILING))
def test_a_secret_glued_after_another_is_redacted_whole(lead, trail):
    """Two tokens pasted with no separator: the first rule eats into the second, whose rule
    starts only at a word boundary; the glued rest must not survive (it was left in clear)."""
    first, second = LEADING[lead], TRAILING[trail]
    out = redact(f"export KEYS {first}{second} done")
    body = second[-16:]  # the random tail of the second secret
    assert body not in out and first[-16:] not in out, out
    assert out.endswith(" done") and out.startswith("export KEYS [REDACTED:")
    assert redact(out) == out  # stored text redacted again is unchanged


def test_text_after_a_mark_is_kept_when_it_is_not_token_shaped():
    assert redact("see [REDACTED:github-token] now") == "see [REDACTED:github-token] now"
    assert redact("[REDACTED:x]-abc") == "[REDACTED:x]-abc"


CACHED_RULES = """
import json, sys
from brainlab.sources import secret_rules
print(json.dumps({"heavy": ["requests" in sys.modules, "detect_secrets" in sys.modules],
                  "rules": [[r.kind, r.pattern.pattern, r.pattern.flags, r.group, r.origin]
                            for r in secret_rules.RULES]}))
"""


def _rules_in_child(cache):
    done = subprocess.run([sys.executable, "-c", CACHED_RULES], capture_output=True, text=True,
                          check=True, env={**os.environ, "BRAINLAB_CACHE_DIR": str(cache)})
    return json.loads(done.stdout)


def test_plugin_patterns_are_cached_per_version_and_equal_the_live_ones(tmp_path):
    """The first import reads detect-secrets and writes its patterns to the cache; the next
    imports neither detect-secrets nor requests (50-60 ms of every ingest) and builds the
    same rules; a corrupt cache file is read live again and rewritten."""
    first = _rules_in_child(tmp_path)
    written = list(tmp_path.glob("secret-patterns-detect-secrets-*.json"))
    assert len(written) == 1 and first["heavy"][1] is True
    second = _rules_in_child(tmp_path)
    assert second["heavy"] == [False, False]
    assert second["rules"] == first["rules"]
    written[0].write_text("[[1, 2]]", encoding="utf-8")  # malformed: read live again
    third = _rules_in_child(tmp_path)
    assert third["rules"] == first["rules"] and third["heavy"][1] is True
    assert _rules_in_child(tmp_path)["heavy"] == [False, False]  # and rewritten



LAZY = """
import json, sys
from brainlab.sources import secret_rules
from brainlab.sources.redact import redact
compiled = lambda: sorted({r.kind for r in secret_rules.RULES if "pattern" in vars(r)})
before = compiled()
out = redact("push with ghp_" + "a1B2" * 9 + " done")
print(json.dumps({"before": before, "after": compiled(), "out": out,
                  "metadata": "importlib.metadata" in sys.modules}))
"""


def test_rules_compile_on_first_use_and_redact_as_before(tmp_path):
    """Importing the rules compiles none of them and, once detect-secrets' patterns are cached
    (every process after a machine's first), imports no importlib.metadata (issue 12: 15-40 ms
    of every ingest); a text compiles only the rules whose hint it holds, and is redacted as
    with every rule compiled (the property tests compare all rules). The cache is this test's
    own, warmed by a first child: alone, the test once read whatever cache the run had left."""
    env = {**os.environ, "BRAINLAB_CACHE_DIR": str(tmp_path)}
    cold = json.loads(subprocess.run([sys.executable, "-c", LAZY], capture_output=True,
                                     text=True, check=True, env=env).stdout)
    assert list(tmp_path.glob("secret-patterns-detect-secrets-*.json"))  # the first wrote it
    seen = json.loads(subprocess.run([sys.executable, "-c", LAZY], capture_output=True,
                                     text=True, check=True, env=env).stdout)
    assert seen["before"] == [] and seen["metadata"] is False
    assert "github-token" in seen["after"] and "private-key" not in seen["after"]
    assert seen["out"] == cold["out"] == "push with [REDACTED:github-token] done"
    assert seen["out"] == redact("push with ghp_" + "a1B2" * 9 + " done")
    for rule in RULES:  # the group each compiled pattern really has
        assert rule.group == (rule.wanted_group if rule.pattern.groups >= rule.wanted_group
                              else 0)


def test_installed_version_follows_the_dist_info_folder(tmp_path, monkeypatch):
    """The version comes from the package's dist-info folder, which an upgrade renames; it
    equals importlib.metadata's, and an ambiguous folder falls back to importlib.metadata."""
    from importlib.metadata import version

    from brainlab.sources.secret_rules import DETECT_SECRETS_VERSION, installed_version

    assert DETECT_SECRETS_VERSION == version("detect-secrets")
    (tmp_path / "fakepkg").mkdir()
    (tmp_path / "fakepkg" / "__init__.py").write_text("")
    info = tmp_path / "fakepkg-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakepkg\nVersion: 1.2.3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert installed_version("fakepkg") == "1.2.3"
    info.rename(tmp_path / "fakepkg-1.3.0.dist-info")  # upgraded
    assert installed_version("fakepkg") == "1.3.0"
    stale = tmp_path / "fakepkg-0.9.dist-info"  # a leftover: importlib.metadata decides
    stale.mkdir()
    (stale / "METADATA").write_text("Metadata-Version: 2.1\nName: fakepkg\nVersion: 0.9\n")
    assert installed_version("fakepkg") == version("fakepkg")
