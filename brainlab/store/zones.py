"""Time zone names: the one check every zone goes through (issue 47 item 6).

A zone is used twice: by Python (``zoneinfo``, the settings and the report's dates) and by
DuckDB (``timezone($tz, ...)`` in the dated usage views). The two lists differ: Python opens
any file of the system's zoneinfo folder (``posixrules``, ``localtime``, ``right/UTC``,
``posix/Europe/Paris``), DuckDB knows the ICU list (``SELECT name FROM pg_timezone_names()``).
:func:`check_zone` accepts a name both know, converts the ``posix/`` and ``right/`` copies to
their base name (``posix/Europe/Paris`` is Europe/Paris; ``right/`` adds leap seconds, which
no transcript timestamp counts) and ``localtime`` to the machine's zone, and refuses anything
else with one line naming names that work. A name longer than :data:`ZONE_MAX_CHARS` is refused
without echoing it whole.

The machine's zone (:func:`machine_zone`) is used when nothing names one. In containers it is
often a POSIX ``TZ`` rule (``UTC0``, ``JST-9``, ``CET-1CEST,M3.5.0,M10.5.0/3``): a rule with no
summer time and a whole-hour offset is its ``Etc/GMT±N`` zone (the same sign convention), any
other is not a zone: dates are then shown in UTC with a one-line warning on stderr. Given
explicitly (``--timezone``, ``$BRAINLAB_TIMEZONE``, ``timezone`` in brainlab.toml) a POSIX rule
is refused, naming the zone to give instead when there is one.

DuckDB's list is read once per installed DuckDB version and kept in the cache folder
(``duckdb-zones-<version>-by-lower-name.json``: each lower-cased name to its spelling,
:func:`brainlab.common.paths.cache_dir`).
"""

from __future__ import annotations

import os
import re
import sys
from functools import cache

from brainlab.common.errors import ConfigError

ZONE_MAX_CHARS = 64  # the longest IANA name is 32 characters (America/Argentina/ComodRivadavia)
UTC_SPELLINGS = ("UTC", "Z", "ETC/UTC", "ZULU", "UCT", "ETC/ZULU", "ETC/UCT", "GMT", "ETC/GMT",
                 "UNIVERSAL", "ETC/UNIVERSAL", "GREENWICH", "ETC/GREENWICH")
_HINT = "give an IANA name like Europe/Paris, America/New_York or UTC"


@cache
def _posix() -> re.Pattern:
    """A POSIX TZ rule: std name, offset [dst name [offset] [,rule]] (POSIX.1-2017 §8.3).

    Compiled on first use: a zone name that both lists know never needs it (a dated usage
    command's start, issue 40's speed check).
    """
    return re.compile(r"^(?:<[A-Za-z0-9+\-]{3,}>|[A-Za-z]{3,})([+-]?)(\d{1,2})"
                      r"(?::(\d{2})(?::(\d{2}))?)?(?P<dst>(?:<[A-Za-z0-9+\-]{3,}>|[A-Za-z]{3,}).*)?$")


@cache
def duckdb_zones() -> dict[str, str]:
    """DuckDB's zone names (ICU), lower-cased to their spelling; cached per DuckDB version."""
    import json

    from brainlab.common.paths import cache_dir
    from brainlab.store.connection import engine, memory

    # the engine module's version: importing the duckdb package for it cost a dated usage
    # command ~40 ms of CPU, 1.12x its time before this check (issue 40's speed check)
    version = getattr(engine(), "__version__", None)
    if not version:  # pragma: no cover  (every DuckDB release has one)
        return {}
    # stored as the mapping itself: a dated command reads it with no loop over 600 names
    path = cache_dir() / f"duckdb-zones-{version}-by-lower-name.json"
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(known, dict) and len(known) > 100:  # values checked where one is used
            return known
    except (OSError, ValueError):
        pass
    con = memory()
    try:
        names = sorted(r[0] for r in con.execute("SELECT name FROM pg_timezone_names()").fetchall())
    finally:
        con.close()
    known = {n.lower(): n for n in names}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(json.dumps(known), encoding="utf-8")
        os.replace(partial, path)
    except OSError:  # a read-only home: read again next time
        pass
    return known


def _quoted(*args, **kwargs) -> str:
    """:func:`brainlab.sources.messages.quoted`, imported only for a message (a refusal).

    A valid zone never needs it, and ``brainlab.sources`` costs a dated usage command ~2 ms.
    """
    from brainlab.sources.messages import quoted

    return quoted(*args, **kwargs)


def _python_knows(name: str) -> bool:
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True


def posix_rule_zone(rule: str) -> str | None:
    """The ``Etc/GMT±N`` zone of a POSIX TZ rule without summer time and a whole-hour offset.

    ``UTC0`` and ``GMT0`` are UTC, ``JST-9`` is Etc/GMT-9 (POSIX and Etc/GMT share the sign);
    a rule with summer time (``CET-1CEST,...``) or minutes (``IST-5:30``) has no such zone: None.
    """
    found = _posix().match(rule)
    if not found or found.group("dst") or found.group(3) not in (None, "00") \
            or found.group(4) not in (None, "00"):
        return None
    hours = int(found.group(2))
    if hours == 0:
        return "UTC"
    if hours > 14:
        return None
    return f"Etc/GMT{'-' if found.group(1) == '-' else '+'}{hours}"


def is_posix_rule(name: str) -> bool:
    """True when ``name`` reads as a POSIX TZ rule (``UTC0``, ``CET-1CEST,M3.5.0,M10.5.0/3``)."""
    return bool(_posix().match(name)) and any(c.isdigit() for c in name)


def check_zone(name: object, where: str = "timezone") -> str:
    """``name`` as a zone both Python and DuckDB know (converted when it can be); else ConfigError.

    ``where`` names what gave it (``--timezone``, ``$BRAINLAB_TIMEZONE``, ``<file>: timezone``).
    """
    lead = f"{where}: " if where else ""
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where or 'timezone'} expects a zone name such as Europe/Paris, got"
                          f" {_quoted(name, 40, as_repr=True)}")
    name = name.strip()
    if len(name) > ZONE_MAX_CHARS:
        raise ConfigError(f"{lead}{_quoted(name, 40, as_repr=True)} is not a time zone (longer"
                          f" than {ZONE_MAX_CHARS} characters): {_HINT}")
    if name.upper() in UTC_SPELLINGS:
        return "UTC"
    converted = name
    if name.lower() == "localtime":
        converted = machine_zone(warn=False)
    elif name.startswith(("posix/", "right/")):
        converted = name.split("/", 1)[1]
    known = duckdb_zones()
    spelled = known.get(converted.lower()) if known else converted
    if not isinstance(spelled, str):  # not in the list, or a cache file edited by hand
        spelled = None
    if spelled and spelled.upper() in UTC_SPELLINGS:
        return "UTC"
    if spelled and _python_knows(spelled):
        return spelled
    if is_posix_rule(name):
        zone = posix_rule_zone(name)
        instead = (f"give {zone} for this fixed offset, or the IANA name of the place" if zone
                   else "give the IANA name of the place (Europe/Paris, America/New_York), which"
                   " knows its summer time")
        raise ConfigError(f"{lead}{_quoted(name, 40, as_repr=True)} is a POSIX TZ rule, not a"
                          f" zone name: {instead}")
    raise ConfigError(f"{lead}unknown time zone"
                      f" {_quoted(name, 40, as_repr=True)}: {_HINT}")


_WARNED: set[str] = set()


def machine_zone(warn: bool = True) -> str:
    """The machine's zone: ``$TZ``, else the system's (/etc/localtime, tzlocal); UTC if unknown.

    A ``$TZ`` POSIX rule is its ``Etc/GMT±N`` zone when it has one, else UTC with a one-line
    warning on stderr (once per process); a name neither Python nor DuckDB knows likewise.
    """
    named = os.environ.get("TZ", "").strip().lstrip(":")
    if named and os.path.isabs(named):  # TZ=:/usr/share/zoneinfo/Europe/Paris
        named = named.split("/zoneinfo/", 1)[1] if "/zoneinfo/" in named else ""
    if not named:
        named = _system_zone()
    if named.lower() == "localtime":
        named = _system_zone()
    try:
        return check_zone(named, "this machine's time zone") if named else "UTC"
    except ConfigError:
        pass
    zone = posix_rule_zone(named) if is_posix_rule(named) else None
    if zone:
        return zone
    if warn and named not in _WARNED:
        _WARNED.add(named)
        kind = "a POSIX TZ rule" if is_posix_rule(named) else "not a zone DuckDB knows"
        sys.stderr.write(f"Warning: this machine's time zone {_quoted(named, 40, as_repr=True)} is"
                         f" {kind}: dates are shown in UTC; set --timezone or $BRAINLAB_TIMEZONE"
                         " to an IANA name such as Europe/Paris\n")
    return "UTC"


def _system_zone() -> str:
    """The system's zone name (/etc/localtime's link, else tzlocal); "" when it cannot be told."""
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        target = ""
    if "/zoneinfo/" in target:
        return target.split("/zoneinfo/", 1)[1]
    try:
        from tzlocal import get_localzone_name

        return get_localzone_name() or ""
    except Exception:  # noqa: BLE001  (an odd system setting: fall back, as a clock would)
        return ""
