"""The one settings object (issue 40 item 1): resolved once per process, one precedence.

Each setting is taken from the first of these that gives it:

1. the command's option (``--db``, ``--timezone``, ``--threshold`` ...), applied by the command
   on top of the resolved settings (:meth:`Settings.with_options`);
2. the environment: ``$BRAINLAB_DB``, ``$BRAINLAB_PRICES``, ``$BRAINLAB_TIMEZONE``,
   ``$BRAINLAB_START_OF_WEEK``, ``$BRAINLAB_THRESHOLDS`` and ``$BRAINLAB_REGULATOR``
   (``key=value`` pairs, comma-separated, over the file's tables);
3. the settings file ``--config FILE``, else ``$BRAINLAB_CONFIG``;
4. else ``brainlab.toml`` in the user's working folder (``$PWD``, where the user typed the
   command, then the process's folder: a notebook kernel runs in ``notebooks/``);
5. the SPEC defaults (:mod:`brainlab.spec`).

One file is read (the first of 3 and 4). It may hold ``[thresholds]`` (fields of
:class:`~brainlab.spec.thresholds.Thresholds`), ``[regulator]`` (fields of
:class:`~brainlab.spec.regulator.RegulatorRules`), ``[paths]`` (``db``, ``reports``,
``prices``; relative to the file's folder), ``timezone`` and ``start_of_week``. Every value is
checked once, here: a bad one is one :class:`~brainlab.errors.ConfigError` naming the file (or
variable) and the key.

The command line resolves the settings once (:func:`brainlab.cli.main`) and makes them the
process's (:func:`use`); everything it starts (the notebook kernels of ``lab`` and ``report``,
the hook's detached worker) receives that very object serialized in ``$BRAINLAB_SETTINGS``
(:data:`SETTINGS_ENV`), which stands there for the file and the defaults (:func:`resolve`).
Library code and notebooks ask :func:`current` (notebooks through
:func:`brainlab.lab.notebook_settings`).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from brainlab.common.errors import ConfigError
from brainlab.common.paths import (  # noqa: F401  (DEFAULT_DB, DEFAULT_REPORTS, DEMO_DIR re-exported)
    CONFIG_ENV,
    DB_ENV,
    DEFAULT_CONFIG,
    DEFAULT_DB,
    DEFAULT_REPORTS,
    DEMO_DIR,
    PRICES_ENV,
    REGULATOR_ENV,
    SETTINGS_ENV,
    SETTINGS_ENVS,
    THRESHOLDS_ENV,
    TZ_ENV,
    WEEK_ENV,
    config_requested,
    user_path,
)
from brainlab.sources.messages import quoted
from brainlab.spec.regulator import RegulatorRules
from brainlab.spec.thresholds import CONTEXT_WINDOW_TOKENS, Thresholds  # noqa: F401
from brainlab.spec.values import parse_overrides, shown, typed_value  # noqa: F401  (re-exported)
from brainlab.spec.weeks import FIRST_DAYS

PATH_KEYS = ("db", "reports", "prices")
CONFIG_MAX_BYTES = 1_000_000  # a settings file holds a few hundred bytes; past this, refused
TOP_KEYS = ("thresholds", "regulator", "paths", "timezone", "start_of_week")


@dataclass(frozen=True)
class Settings:
    """Everything a command, notebook, report or hook needs to know besides its arguments."""

    thresholds: Thresholds = field(default_factory=Thresholds)  # SPEC §3.3, §4.4
    rules: RegulatorRules = field(default_factory=RegulatorRules)  # SPEC §6.5; base of --rules
    db: Path | None = None  # the store (None: data/brainlab.duckdb from the working folder)
    reports: Path | None = None  # where `report weekly` writes (None: reports/)
    prices: Path | None = None  # a price file over the package's table (None: none)
    timezone: str | None = None  # IANA zone of dated views (None: the machine's)
    start_of_week: str | None = None  # "monday" (ISO, default) or "sunday"
    source: Path | None = None  # the TOML file read, if any
    origins: dict[str, str] = field(default_factory=dict, compare=False)  # setting -> where from

    def with_options(self, **options: Any) -> Settings:
        """These settings under a command's options (level 1): each non-None one wins."""
        given = {k: v for k, v in options.items() if v is not None}
        if not given:
            return self
        return replace(self, **given, origins={**self.origins, **dict.fromkeys(given, "option")})

    def summary(self) -> str:
        """One line: the file read and every threshold and rule that differs from the SPEC's."""
        changed = [f"{k}={v}" for k, v in asdict(self.thresholds).items()
                   if v != getattr(Thresholds(), k)]
        changed += [f"{k}={v}" for k, v in asdict(self.rules).items()
                    if v != getattr(RegulatorRules(), k)]
        return (f"{self.source or 'no settings file'}; changed from the SPEC:"
                f" {', '.join(changed) or 'nothing'}")

    def to_json(self) -> str:
        """The settings as one JSON text (``$BRAINLAB_SETTINGS``, read back by :meth:`from_json`)."""
        value = asdict(self)
        for key in (*PATH_KEYS, "source"):
            value[key] = None if value[key] is None else str(Path(value[key]).resolve())
        return json.dumps(value, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Settings:
        """The settings a command serialized with :meth:`to_json` (checked again)."""
        try:
            value = json.loads(text)
            for key in (*PATH_KEYS, "source"):
                value[key] = None if value.get(key) is None else Path(value[key])
            return cls(thresholds=Thresholds().replace(**value.pop("thresholds")),
                       rules=RegulatorRules().replace(**value.pop("rules")), **value)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            raise ConfigError(f"${SETTINGS_ENV}: not the settings a brainlab command wrote"
                              f" ({exc}); unset it") from None


def config_file(path: str | os.PathLike | None = None,
                environ: dict[str, str] | None = None) -> tuple[Path | None, str]:
    """The settings file to read and what named it: ``path``, ``$BRAINLAB_CONFIG``, ./brainlab.toml.

    (None, "") when no file is named and none is in the user's folder (SPEC defaults).
    """
    environ = os.environ if environ is None else environ
    if path:
        return Path(path), "--config"
    if environ.get(CONFIG_ENV):
        return user_path(environ[CONFIG_ENV]), f"${CONFIG_ENV}"
    found = user_path(DEFAULT_CONFIG)
    return (found, str(DEFAULT_CONFIG)) if found.is_file() else (None, "")


def resolve(config: str | os.PathLike | None = None,
            environ: dict[str, str] | None = None) -> Settings:
    """Settings from the environment, the file and the SPEC defaults (levels 2 to 5), checked.

    ``config``: the ``--config`` option. Without one, ``$BRAINLAB_SETTINGS`` (what the command
    that started this process resolved) stands for the file and the defaults, and this
    process's own variables apply on top. Raises ConfigError naming the file or variable and
    the key of the first bad value.
    """
    environ = os.environ if environ is None else environ
    handed = None if config else environ.get(SETTINGS_ENV)
    if handed:  # levels 2 to 5 as the command that started this process resolved them
        settings = Settings.from_json(handed)
        path, origins = settings.source, dict(settings.origins)
    else:
        path = config_file(config, environ)[0]
        settings = Settings() if path is None else load_file(path)
        origins = {} if path is None else {k: str(path) for k in _file_keys(settings)}
    changes: dict[str, Any] = {}
    for key, name in (("db", DB_ENV), ("prices", PRICES_ENV)):
        if environ.get(name):
            changes[key] = user_path(environ[name])
            origins[key] = f"${name}"
    if environ.get(TZ_ENV):
        changes["timezone"] = check_timezone(environ[TZ_ENV], f"${TZ_ENV}")
        origins["timezone"] = f"${TZ_ENV}"
    if environ.get(WEEK_ENV):
        changes["start_of_week"] = _first_day(environ[WEEK_ENV].strip().lower(), f"${WEEK_ENV}")
        origins["start_of_week"] = f"${WEEK_ENV}"
    for key, name in (("thresholds", THRESHOLDS_ENV), ("rules", REGULATOR_ENV)):
        if environ.get(name):
            try:
                pairs = parse_overrides([p for p in environ[name].split(",") if p.strip()])
                changes[key] = getattr(settings, key).replace(**pairs)
            except ConfigError as exc:
                raise ConfigError(f"${name}: {exc}") from None
            origins.update(dict.fromkeys((f"{key}.{k}" for k in pairs), f"${name}"))
    if path is None and not changes:
        return settings
    return replace(settings, **changes, origins=origins)


def _file_keys(settings: Settings) -> list[str]:
    """The settings a file set (for :attr:`Settings.origins`)."""
    keys = [k for k in (*PATH_KEYS, "timezone", "start_of_week") if getattr(settings, k)]
    keys += [f"thresholds.{k}" for k, v in asdict(settings.thresholds).items()
             if v != getattr(Thresholds(), k)]
    keys += [f"rules.{k}" for k, v in asdict(settings.rules).items()
             if v != getattr(RegulatorRules(), k)]
    return keys


def load_file(path: str | os.PathLike) -> Settings:
    """The settings of one TOML file over the SPEC defaults; ConfigError naming file and key."""
    path = Path(path)
    shown_path = quoted(str(path))
    try:
        kind = path.stat().st_mode
    except (OSError, ValueError):
        raise ConfigError(f"config file not found: {shown_path} (give an existing TOML file)") \
            from None
    if not stat.S_ISREG(kind):  # a FIFO or a device would block or never end; a folder
        raise ConfigError(f"{shown_path}: not a regular file (a folder, FIFO or device): give a"
                          " TOML file")
    import tomllib

    try:
        with path.open("rb") as handle:
            raw = handle.read(CONFIG_MAX_BYTES + 1)
        if len(raw) > CONFIG_MAX_BYTES:
            raise ConfigError(f"{shown_path}: larger than {CONFIG_MAX_BYTES:,} bytes: not a"
                              " settings file (a few hundred bytes hold every setting)")
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{shown_path}: not a readable TOML file"
                          f" ({quoted(str(exc).splitlines()[0] if str(exc) else exc)})") from None
    except (RecursionError, MemoryError):  # 5,000-deep inline tables, a bomb of arrays
        raise ConfigError(f"{shown_path}: not a readable TOML file (nested too deeply or too"
                          " large for a settings file): give a plain TOML file") from None
    try:
        return _settings(data, path)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def load_settings(path: str | os.PathLike | None = None) -> Settings:
    """:func:`resolve` (kept for callers of the former ``brainlab.config``)."""
    return resolve(path)


def _settings(data: dict[str, Any], source: Path) -> Settings:
    """Check every key of a parsed file and build its Settings."""
    unknown = sorted(set(data) - set(TOP_KEYS))
    if unknown:
        raise ConfigError(f"unknown key(s) {', '.join(quoted(u, 40) for u in unknown[:5])};"
                          f" known: {', '.join(TOP_KEYS)}")
    tables = {name: data.get(name, {}) for name in ("thresholds", "regulator", "paths")}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{name} must be a table ([{name}]), got {shown(table)}")
    paths = tables["paths"]
    unknown = sorted(set(paths) - set(PATH_KEYS))
    if unknown:
        raise ConfigError(f"unknown path(s) {', '.join(quoted(u, 40) for u in unknown[:5])};"
                          f" known: {', '.join(PATH_KEYS)}")
    resolved = {}
    for key, value in paths.items():
        if not isinstance(value, str) or not value:
            raise ConfigError(f"path {key} expects a file or folder name, got {shown(value)}")
        resolved[key] = (source.parent / Path(value).expanduser())
    timezone = data.get("timezone")
    if timezone is not None:
        timezone = check_timezone(timezone, "timezone")
    start_of_week = data.get("start_of_week")
    if start_of_week is not None:
        start_of_week = _first_day(start_of_week, "start_of_week")
    return Settings(thresholds=Thresholds().replace(**tables["thresholds"]),
                    rules=RegulatorRules().replace(**tables["regulator"]),
                    timezone=timezone, start_of_week=start_of_week, source=source, **resolved)


def check_timezone(name: Any, where: str) -> str:
    """``name`` as a zone Python and DuckDB both know (:func:`brainlab.store.zones.check_zone`)."""
    from brainlab.store.zones import check_zone

    return check_zone(name, where)


def _first_day(value: Any, where: str) -> str:
    if value not in FIRST_DAYS:
        raise ConfigError(f"{where} expects monday or sunday, got {shown(value)}")
    return value


# --- the process's settings -----------------------------------------------------------------
_CURRENT: list[Settings] = []  # set by use() (the command line); else resolved on first ask
_RESOLVED: dict[tuple, Settings] = {}  # resolve()'s answer per inputs (env, folders)


configured = config_requested  # a file given or found, or a settings variable set


def use(settings: Settings | None) -> None:
    """Make ``settings`` the process's (None: forget them, resolve again on the next ask)."""
    _CURRENT.clear()
    if settings is not None:
        _CURRENT.append(settings)


def current() -> Settings:
    """The process's settings: the command line's (:func:`use`), else :func:`resolve`'s.

    Resolved once per process (per environment and folder, so a test changing them is seen).
    """
    if _CURRENT:
        return _CURRENT[0]
    key = (os.environ.get("PWD"), os.getcwd(), *(os.environ.get(n) for n in SETTINGS_ENVS))
    found = _RESOLVED.get(key)
    if found is None:
        found = resolve()
        _RESOLVED.clear()
        _RESOLVED[key] = found
    return found


def child_env(settings: Settings | None = None) -> dict[str, str]:
    """The variables handing ``settings`` (default: the process's) to a process it starts."""
    return {SETTINGS_ENV: (settings or current()).to_json()}


def thresholds_of(thresholds_file: str | os.PathLike | None = None) -> tuple[Thresholds, str]:
    """The thresholds a run uses and where they come from (the report's "thresholds:" line).

    ``thresholds_file`` (``report weekly --thresholds FILE``, an option): that file's
    ``[thresholds]`` table over the SPEC defaults; else the process's settings.
    """
    if thresholds_file:
        return load_file(thresholds_file).thresholds, str(thresholds_file)
    settings = current()
    where = sorted({v for k, v in settings.origins.items() if k.startswith("thresholds.")})
    return settings.thresholds, ", ".join(where) or "SPEC defaults"
