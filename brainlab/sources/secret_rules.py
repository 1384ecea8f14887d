"""The secret rule set :mod:`brainlab.sources.redact` applies: detect-secrets' plugins plus ours.

Token shapes come from the installed detect-secrets package (Yelp, PyPI ``detect-secrets``,
version in :data:`DETECT_SECRETS_VERSION`): every regex plugin's ``denylist``, read from the
package on the first run of each installed version and kept in the user's cache folder
(importing the plugins costs 50-60 ms), so upgrading the package updates the rules. A plugin is either
used (:data:`USED_PLUGINS`, with the substrings one of which must be present before its
patterns run) or left out with a reason (:data:`EXCLUDED_PLUGINS`); a test fails when a new
plugin appears in neither. Vendor token formats also come from gitleaks' maintained rule list
(:mod:`brainlab.sources.gitleaks_rules`, its data file vendored with version and licence).
brainlab's own rules cover what neither redacts in a command line: whole private key blocks,
``KEY=value`` assignments, the value after a secret-bearing flag (``--token X``, ``docker
login -p X``, ``htpasswd -b f u X``), ``mysql -p<pw>``, ``echo <pw> | sudo -S``, bearer and
basic headers, ``curl -u u:pw``, URL passwords and tokens, and formats seen in the wild.

Every pattern runs in linear time on any text: detect-secrets patterns that start with a word
character are guarded so they start only at a word boundary (``eyJeyJeyJ...`` is one start,
not a million), and ours use possessive quantifiers where a run could be re-scanned.

A rule's regexes are compiled when a text first holds its hint: compiling the ~80 patterns
and hint scans at import cost 15-20 ms of every ingest run, most of whose texts hold few
hints (issue 12).
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass
from functools import cache, cached_property


def installed_version(package: str = "detect_secrets") -> str:
    """The installed version of ``package``, from its ``<name>-<version>.dist-info`` folder.

    The folder beside the package, which pip renames on every upgrade, says it without
    ``importlib.metadata`` (12-23 ms to import, issue 12) or importing the package; any
    other layout (an egg, a source checkout, two dist-info folders) asks importlib.metadata.
    """
    from importlib.util import find_spec

    prefix, suffix = package + "-", ".dist-info"
    try:
        spec = find_spec(package)
        folder = os.path.dirname(os.path.dirname(spec.origin)) if spec and spec.origin else None
        found = [name[len(prefix):-len(suffix)] for name in os.listdir(folder)
                 if name.startswith(prefix) and name.endswith(suffix)] if folder else []
    except (OSError, ValueError):
        found = []
    if len(found) == 1:
        return found[0]
    from importlib.metadata import version

    return version(package.replace("_", "-"))


DETECT_SECRETS_VERSION = installed_version()


@dataclass(frozen=True)
class Rule:
    """One secret shape: ``kind`` names it in the ``[REDACTED:kind]`` mark.

    ``source`` is compiled (``pattern``) on first use; ``group`` is ``wanted_group`` when the
    pattern has that group (a detect-secrets pattern may lack it), else 0.
    """

    kind: str
    source: str  # the regex
    hint: tuple[str, ...]  # one of these substrings must be in the text before it is tried
    wanted_group: str | int = 0  # the part of a match that is the secret (0: all of it)
    origin: str = "brainlab"
    nocase: bool = False  # the hint is looked for in the lower-cased text
    flags: int = 0  # the regex's flags
    min_entropy: float | None = None  # gitleaks' floor: a lower-entropy match is kept

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """The compiled regex (compiled once, when first needed)."""
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # gitleaks' Go `[[` is a plain `[`
            return re.compile(self.source, self.flags)

    @cached_property
    def group(self) -> str | int:
        """The group of a match that is the secret (0: the whole match)."""
        wanted = self.wanted_group
        return wanted if isinstance(wanted, str) or self.pattern.groups >= wanted else 0

    @cached_property
    def hint_set(self) -> frozenset[str]:
        """The hint's substrings as a set (compared with :func:`hints_present`)."""
        return frozenset(self.hint)

    @cached_property
    def _scan(self):
        """The hint's substrings as one alternation regex (one C scan for all of them)."""
        return re.compile("|".join(map(re.escape, self.hint))).search

    def may_apply(self, text: str, lowered: str) -> bool:
        """True when one of the hint's substrings is present (one C scan for all of them)."""
        return self._scan(lowered if self.nocase else text) is not None


# detect-secrets plugin (module.Class) -> (the hint that must be present before it runs, the
# regex group that is the secret: 0 for the whole match).
_GH = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
_GL = ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "glagent-",
       "gloas-", "GR1348941")
USED_PLUGINS: dict[str, tuple[tuple[str, ...], int]] = {
    "private_key.PrivateKeyDetector": (("PRIVATE KEY", "PuTTY-User-Key"), 0),
    "pypi_token.PypiTokenDetector": (("pypi-",), 0),
    "slack.SlackDetector": (("xox", "hooks.slack.com"), 0),
    "github_token.GitHubTokenDetector": (_GH, 0),
    "gitlab_token.GitLabTokenDetector": (_GL, 0),
    "aws.AWSKeyDetector": (("A3T", "ABIA", "ACCA", "AKIA", "ASIA", "aws", "AWS", "Aws"), 1),
    "jwt.JwtTokenDetector": (("eyJ",), 0),
    "stripe.StripeDetector": (("k_live_",), 0),
    "openai.OpenAIDetector": (("T3BlbkFJ",), 0),
    "sendgrid.SendGridDetector": (("SG.",), 0),
    "square_oauth.SquareOAuthDetector": (("sq0csp-",), 0),
    "azure_storage_key.AzureStorageKeyDetector": (("AccountKey=",), 0),
    "basic_auth.BasicAuthDetector": (("://",), 1),
    "artifactory.ArtifactoryDetector": (("AKC", "AP"), 0),
    "discord.DiscordBotTokenDetector": ((".",), 0),
    "mailchimp.MailchimpDetector": (("-us",), 0),
    "telegram_token.TelegramBotTokenDetector": ((":",), 0),
    "twilio.TwilioKeyDetector": (("AC", "SK"), 0),
}
EXCLUDED_PLUGINS: dict[str, str] = {
    "npm.NpmDetector": "its `//.+/:_authToken=` re-scans a line once per `//` (quadratic); "
                       "`_authToken=` is caught by the secret-assignment rule",
    "keyword.KeywordDetector": "not a regex plugin; keyword assignments are our "
                               "secret-assignment rule",
    "high_entropy_strings.Base64HighEntropyString": "hashes, ids and paths are high-entropy: "
                                                    "analysis needs them",
    "high_entropy_strings.HexHighEntropyString": "git SHAs and content hashes are hex",
    "ip_public.IPPublicDetector": "an IP address is not a secret",
    "cloudant.CloudantDetector": "keyword-context pattern (` *` then ` +`: quadratic on blank "
                                 "runs); covered by secret-assignment",
    "ibm_cloud_iam.IbmCloudIamDetector": "keyword-context pattern; covered by "
                                         "secret-assignment",
    "ibm_cos_hmac.IbmCosHmacDetector": "keyword-context pattern; covered by secret-assignment",
    "softlayer.SoftlayerDetector": "keyword-context pattern; covered by secret-assignment",
}

_WORD_START = re.compile(r"^(?:\(\?:)?\(?[\w\[]")  # the pattern starts with a word character


def _kind(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


def live_patterns() -> list[tuple[str, str, str, int]]:
    """(plugin, secret type, regex, flags) of each used plugin's denylist, from the package."""
    found = []
    for name in USED_PLUGINS:
        module, cls = name.rsplit(".", 1)
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls)
        found += [(name, plugin.secret_type, p.pattern, p.flags) for p in plugin.denylist]
    return found


def plugin_patterns() -> list[tuple[str, str, str, int]]:
    """:func:`live_patterns`, kept per detect-secrets version in the user's cache folder.

    Importing the plugins imports ``requests`` (urllib3, ssl, http): 50-60 ms of every ingest
    for a few regexes (issue 12). The first run reads them live and writes them as JSON to
    ``secret-patterns-detect-secrets-<version>.json`` (:func:`brainlab.common.paths.cache_dir`);
    later runs read that file. Another version is another file, so an upgrade updates the
    rules; a file that is unreadable, malformed or names other plugins is read live again.
    """
    import json

    try:
        rows = [tuple(row) for row in json.loads(_cache_path().read_text(encoding="utf-8"))]
        if rows and {r[0] for r in rows} == set(USED_PLUGINS) and all(
                len(r) == 4 and all(isinstance(v, str) for v in r[:3])
                and isinstance(r[3], int) for r in rows):
            return rows
    except (OSError, RuntimeError, ValueError, TypeError):
        pass  # not written yet, or unusable: read live below
    rows = live_patterns()
    _write_cache(rows)
    return rows


def _cache_path():
    """The patterns file of the installed detect-secrets version, in the cache folder."""
    from brainlab.common.paths import cache_dir

    return cache_dir() / f"secret-patterns-detect-secrets-{DETECT_SECRETS_VERSION}.json"


def _write_cache(rows: list[tuple[str, str, str, int]]) -> None:
    """Write the patterns' cache file atomically; a cache that cannot be written is skipped."""
    import contextlib
    import json
    import os
    import tempfile

    try:
        path = _cache_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(prefix=".secret-patterns-", dir=path.parent)
    except (OSError, RuntimeError):  # a read-only or missing home: live each time
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(rows, out)
        os.replace(partial, path)
    except OSError:  # a full disk: no half-written file left behind
        with contextlib.suppress(OSError):
            os.unlink(partial)


def _plugin_rules() -> list[Rule]:
    rules: list[Rule] = []
    for name, secret_type, source, flags in plugin_patterns():
        hint, group = USED_PLUGINS[name]
        if _WORD_START.match(source) and not source.startswith("(?:\\s"):
            source = r"(?<![A-Za-z0-9])(?:" + source + ")"  # one start per word: linear
        rules.append(Rule(_kind(secret_type), source, hint, group,
                          f"detect-secrets {DETECT_SECRETS_VERSION} {name.rsplit('.', 1)[1]}",
                          flags=flags))
    return rules


_SECRET_WORDS = (r"key|secret|token(?!s)|passw(?:or)?d|pwd|pass|credential|auth|private|session"
                 r"|cookie|signature|salt|dsn")


def _own(kind: str, pattern: str, hint: tuple[str, ...], group: str | int = 0, flags: int = 0,
         nocase: bool = False) -> Rule:
    return Rule(kind, pattern, hint, group, nocase=nocase, flags=flags)


# Applied before detect-secrets' rules (order matters: a block or token is redacted once).
OWN_FIRST: list[Rule] = [
    _own("private-key", r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END"
         r"[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", ("PRIVATE KEY",), flags=re.S),
    _own("anthropic-key", r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_\-]{16,}+", ("sk-ant-",)),
    _own("openai-key", r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}+",
         ("sk-",)),
    _own("stripe-key", r"(?<![A-Za-z0-9])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}+",
         ("k_live_", "k_test_")),
    _own("aws-access-key", r"(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b",
         ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA")),
    _own("google-api-key", r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{35}", ("AIza",)),
    _own("github-token", r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{30,}+|github_pat_"
         r"[A-Za-z0-9_]{22,}+)", (*_GH, "github_pat_")),
    _own("gitlab-token", r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_\-]{20,}+", ("glpat-",)),
    _own("slack-token", r"(?<![A-Za-z0-9])xox[abposre]-[A-Za-z0-9\-]{10,}+", ("xox",)),
    _own("slack-webhook", r"hooks\.slack\.com/services/[A-Za-z0-9/_\-]++", ("hooks.slack",)),
    _own("npm-token", r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}\b", ("npm_",)),
    _own("huggingface-token", r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}+", ("hf_",)),
    _own("jwt", r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_\-]{5,}+\.eyJ[A-Za-z0-9_\-]{5,}+\."
         r"[A-Za-z0-9_\-]{5,}+", ("eyJ",)),
    _own("url-password", r"(?<=://)[^/\s:@]*+:(?!\[REDACTED)([^@\s/]++)(?=@)", ("://",), 1),
    # https://<token>@github.com: a long token as the whole user part.
    _own("url-token", r"(?<=://)(?!\[REDACTED)[A-Za-z0-9_\-.~]{20,}+(?=@)", ("://",)),
    # ghp_ right after letters (`tokenghp_...`): the 36 characters of a classic token.
    _own("github-token", r"gh[pousr]_[A-Za-z0-9]{36}(?![A-Za-z0-9])", _GH),
    _own("basic-auth", r"(?i)(?<=basic )[A-Za-z0-9+/]{6,}+=*+", ("basic ",), nocase=True),
    # curl -u user:pw / --user=user:pw: the password after the colon.
    _own("curl-user", r"(?<![\w-])(?:-u|--user)(?:=|[ \t]++)(['\"]?+)[^\s:'\"]*+:"
         r"(?!\[REDACTED)([^\s'\"]++)\1", ("curl",), 2, nocase=True),
    _own("htpasswd-password", r"\bhtpasswd[ \t]++-(?=[A-Za-z]*b)[A-Za-z]++[ \t]++(?:-[A-Za-z]++"
         r"[ \t]++)*+[^\s-]\S*+[ \t]++\S++[ \t]++(['\"]?+)([^\s'\"]++)\1", ("htpasswd",), 2),
    _own("aws-configure", r"\baws[ \t]++configure[ \t]++set[ \t]++\S*?(?:secret|token|passw)"
         r"\S*+[ \t]++(['\"]?+)([^\s'\"]++)\1", ("aws",), 2, nocase=True),
    # Formats seen with no rule of either list outside a keyword context.
    _own("new-relic-key", r"(?<![A-Za-z0-9])NRAK-[A-Z0-9]{27}(?![A-Za-z0-9])", ("NRAK-",)),
    _own("mailgun-key", r"(?<![A-Za-z0-9])key-[a-f0-9]{32}(?![A-Za-z0-9])", ("key-",)),
    _own("sentry-token", r"(?<![A-Za-z0-9])sntry[su]_[A-Za-z0-9+/=_]{40,}+", ("sntry",)),
    _own("atlassian-token", r"(?<![A-Za-z0-9])ATATT3x[A-Za-z0-9_\-=]{20,}+", ("ATATT3",)),
    _own("heroku-key", r"(?<![A-Za-z0-9])HRKU-[A-Za-z0-9_\-]{20,}+", ("HRKU-",)),
    _own("vault-token", r"(?<![A-Za-z0-9])hv[sbr]\.[A-Za-z0-9_\-]{20,}+", ("hvs.", "hvb.", "hvr.")),
]
# Long flags whose next argument is a secret (compared with '-' and '_' removed, lower-cased).
SECRET_FLAGS = frozenset({
    "password", "passwd", "pass", "pw", "token", "apikey", "apitoken", "authtoken",
    "accesstoken", "secret", "secretkey", "clientsecret", "withapikey", "withtoken",
    "httppassword", "httppasswd", "proxypassword", "ftppassword", "registrypassword",
    "dbpassword", "encryptionkey", "keypassword", "storepass", "keypass", "privatekey",
    "secretaccesskey", "awssecretaccesskey", "refreshtoken", "bearertoken", "botoken",
    "bottoken", "passphrase", "sessiontoken", "webhooksecret", "masterkey", "adminpassword",
    "oauth2bearer", "bearer", "idtoken", "authkey", "accesskey", "secretid", "vaulttoken",
})
# Commands whose `-p X` (space between) is a password, not a port or a prompt.
P_PASSWORD_COMMANDS = ("docker", "podman", "buildah", "skopeo", "nerdctl", "helm", "oras",
                       "sshpass", "az", "crane", "regctl", "cf", "oc")
# Applied after them: command-line passwords and generic assignments.
OWN_LAST: list[Rule] = [
    # A secret-bearing flag's next argument: `--token X`, `--apiKey=X`, `docker login -p X`.
    # What a secret-bearing flag receives through the shell (redact._flag_input): a here-string
    # (`--token <<< X`), a here-document, a process or command substitution (`< <(echo X)`,
    # `=$(echo X)`, backticks): the echoed words go; a file (`< f`, `$(cat f)`) names where the
    # secret is and stays. A shell operator is never the value.
    _own("flag-input", r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9_-]*+)(?=[= \t]*+[<\"$`])(?:=|[ \t]*+)"
         r"(?:<<<[ \t]*+"
         r"(\"[^\"\n]*+\"|'[^'\n]*+'|[^\s;|&)]++)|<[ \t]*+<\(([^()\n]*+)\)|(\"?+)\$\(([^()\n]*+)"
         r"\)\4|(\"?+)`([^`\n]*+)`\6|<<-?[ \t]*+(['\"]?+)(\w++)\8[^\n]*+\n(.{0,4096}?)(?:\n[ \t]*+\9(?=\n|$)"
         r"|\Z))", ("--",), flags=re.S),
    # `echo X | cmd --password-stdin` / `--with-token`: what the flag reads from the pipe.
    _own("piped-secret", r"(?<![\w-])(?:echo|printf)[ \t]++(?:-[a-zA-Z]++[ \t]++)?+(?:'%s\\?n?'"
         r"[ \t]++)?+(['\"]?+)([^'\"\s|;&]++)\1[ \t]*+\|[^|\n;&]{0,200}?(?<![\w-])--?"
         r"(?:password-stdin|passwd-stdin|with-token|token-stdin|secret-stdin|stdin-password)\b",
         ("-stdin", "with-token", "stdin-"), 2),
    _own("flag-value", r"(?<![\w-])(-p|--?[A-Za-z][A-Za-z0-9_-]*+)(?:=|[ \t]++)(?!-|\[REDACTED"
         r"|[<>|&;]|\"?+\$\(|\"?+`)(?:\"([^\"\n]++)\"|'([^'\n]++)'|([^\s'\";|&<>`]++))",
         ("--", "-p ", "-p\t")),
    # mysql -p<pw> / mysqldump -p'pw' (the password glued to -p; `-p` alone prompts).
    _own("mysql-password", r"(?<![\w-])-p(['\"]?+)([^\s'\";|&]++)\1", ("mysql", "mariadb"), 2,
         nocase=True),
    # echo '<pw>' | sudo -S ... (the password piped to sudo's standard input).
    _own("sudo-password", r"(?<![\w-])(?:echo|printf)\s++(?:-[a-zA-Z]+\s++)?+(['\"]?+)"
         r"([^'\"\s|]++)\1\s*+\|\s*+sudo\b", ("sudo",), 2),
    _own("bearer", r"(?i)(?<=bearer )[A-Za-z0-9_\-.=+/]{12,}+", ("bearer ",),
         nocase=True),
    # KEY=value / KEY: value where the name says it is a secret: .env lines, `export
    # TOKEN=...`, `password: hunter2`, JSON "apiKey": "...". Found word first (SECRET_WORD),
    # then the name around it and this tail after it: see redact._assignments.
    _own("secret-assignment", r"(\"?\s*+[:=]\s*+)(?!\[REDACTED|\"?+\$\(|\"?+`|<)(?:\"([^\"\n]{4,}+)\"|'"
         r"([^'\n]{4,}+)'|((?:[^\s\"',;&|]|;(?=[^\s;&|]))(?:[^\s\"',;&|]|;(?=[^\s;&|]))"
         r"{3,}+))",
         ("key", "secret", "token", "pass", "pwd", "credential", "auth", "private", "session",
          "cookie", "signature", "salt", "dsn"), 2, nocase=True),
    # Prose: `token hunter2abc`, `password Xk9!mQ2z` (a secret word, blanks, a value with no
    # `=`/`:` between). The value must look like a credential (redact._word_value: letters and
    # a digit or symbol, 8+ characters, entropy), so `token budget exceeded` stays.
    # The name may go on (`aws_secret_access_key X`, `SecretAccessKey X`: `_`, `.`, `-` or a
    # capital after the word; `tokens X` does not); `is`/`was` may stand before the value.
    _own("secret-word-value", r"(?i)(?<![A-Za-z0-9])(?:token|passw(?:or)?d|pwd|passphrase"
         r"|secret|api[ _-]?key)(?:(?-i:[_.\-A-Z])[A-Za-z0-9_.\-]{0,40}+)?+(?:[ \t]++(?:is|was))?+"
         r"[ \t]++(?!\[REDACTED)([A-Za-z0-9_\-!@#$%^&*+=.~/]{8,}+)(?=[\s,;:)\]'\"]|$)",
         ("token", "pass", "pwd", "secret", "api"), 1, nocase=True),
    # Any other UPPER_CASE=value assignment (the .env shape): the value goes, the name stays.
    _own("env-value", r"(?<![A-Za-z0-9_])[A-Z][A-Z0-9_]{2,}+=(?!\[REDACTED|\$\()((?:[^\s\"'`;&|]|;"
         r"(?=[^\s;&|]))(?:[^\s\"'`;&|]|;(?=[^\s;&|])){5,}+)",
         ("=",), 1),
]

SECRET_WORD = re.compile(rf"(?i){_SECRET_WORDS}")  # a secret-assignment name holds one
SECRET_WORD_LOWER = re.compile(_SECRET_WORDS)  # the same, on lower-cased text
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")

def _gitleaks_rules() -> list[Rule]:
    from brainlab.sources.gitleaks_rules import GITLEAKS_VERSION, load_rules

    return [Rule(row["id"], row["regex"], tuple(row["hints"]), row["group"],
                 f"gitleaks {GITLEAKS_VERSION} {row['id']}", nocase=row["nocase"],
                 flags=row["flags"], min_entropy=row["entropy"]) for row in load_rules()]


RULES: list[Rule] = [*OWN_FIRST, *_plugin_rules(), *_gitleaks_rules(), *OWN_LAST]
# What every text pays: a few substring tests. A text holding none has no candidate secret.
CASED_HINTS = tuple(sorted({h for r in RULES if not r.nocase for h in r.hint}))
NOCASE_HINTS = tuple(sorted({h for r in RULES if r.nocase for h in r.hint}))


def trie_regex(words) -> str:
    """The literals ``words`` as one regex shaped like their trie (``xox(?:b|p)?``...).

    A flat alternation of ~300 literals makes the engine try each one at every position;
    the trie tries one branch per distinct next character, and at each node the longer
    word first (a greedy optional tail), so a match is the longest word starting there.
    """
    trie: dict = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict) -> str:
        alts = [re.escape(char) + emit(child) for char, child in sorted(node.items()) if char]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(trie)


# The hints as one trie-shaped regex each: one C scan instead of ~300 ``in`` tests (most
# texts, ids, model names, commands, hold none).
_CASED_SCAN = re.compile(trie_regex(CASED_HINTS)).search
_NOCASE_SCAN = re.compile(trie_regex(NOCASE_HINTS)).search


class _Finder:
    """Which of ``hints`` a text holds, in one C scan plus a few ``in`` tests.

    The trie regex finds, left to right, the longest hint at each place and skips past it;
    every hint that is a prefix of a found one is present too (:meth:`covers`). A hint that
    starts inside a found one is not seen by the scan: the hints that can (a suffix of the
    found one begins them, or they lie inside it) are tested with ``in`` (:meth:`inside`).
    Both are worked out for a hint the first time the scan finds it: for all ~250 hints at
    once they cost 0.1 CPU-s, in every process that imports the rules (each hook, each
    ingest), most of which find few hints or none.
    """

    def __init__(self, hints: tuple[str, ...]) -> None:
        self.hints = hints
        self.findall = re.compile(trie_regex(hints)).findall
        self.covers = cache(self._covers)
        self.inside = cache(self._inside)

    def _covers(self, hit: str) -> frozenset[str]:
        """The hints ``hit`` begins with (itself included): present wherever it is."""
        return frozenset(g for g in self.hints if hit.startswith(g))

    def _inside(self, hit: str) -> tuple[str, ...]:
        """The hints that may start inside ``hit`` (a suffix of it begins them, or the reverse)."""
        return tuple(g for g in self.hints if any(
            g.startswith(hit[i:]) or hit[i:].startswith(g) for i in range(1, len(hit))))

    def __call__(self, haystack: str) -> frozenset[str]:
        hits = set(self.findall(haystack))
        if not hits:
            return _NO_HINTS
        present = set()
        for hit in hits:
            present |= self.covers(hit)
            present.update(g for g in self.inside(hit) if g not in present and g in haystack)
        return frozenset(present)


_NO_HINTS: frozenset[str] = frozenset()
_FIND_CASED, _FIND_NOCASE = _Finder(CASED_HINTS), _Finder(NOCASE_HINTS)


def hints_present(text: str, lowered: str) -> tuple[frozenset[str], frozenset[str]]:
    """(cased hints in ``text``, case-blind hints in ``lowered``): which rules may apply."""
    return _FIND_CASED(text), _FIND_NOCASE(lowered)


def has_candidate(text: str, lowered: str) -> bool:
    """The prefilter: True when any rule's hint is in ``text`` (or its lower-cased form)."""
    return _CASED_SCAN(text) is not None or _NOCASE_SCAN(lowered) is not None
