"""The time zone and week start of the dated usage views (issue 24): `--timezone`, `--start-of-week`.

A day, week or month of `brainlab usage` is the user's: calls are bucketed by their UTC
15-minute bucket in the store (cc_usage_rollup) and each bucket is turned into a day of the
chosen IANA zone at read time (every zone's offset is a multiple of 15 minutes, so a bucket
lies in one local day). The zone is the option's, else the settings' (``$BRAINLAB_TIMEZONE``,
else ``timezone`` in the settings file: :func:`brainlab.settings.current`), else the
machine's (as ccusage does: the ``TZ`` variable, then the system setting, read by tzlocal).
Weeks start on Monday (ISO 8601) unless ``sunday`` is asked for.

Notebooks run in a kernel: ``brainlab report weekly`` passes the zone it resolved as the
report notebook's ``timezone`` parameter, and every command hands its settings to the kernels
it starts (``$BRAINLAB_SETTINGS``); :func:`kernel_timezone` reads the parameter, then the
settings, then the machine.
"""

from __future__ import annotations

import os
import zoneinfo

from brainlab.common.errors import ConfigError
from brainlab.common.paths import TZ_ENV, WEEK_ENV  # noqa: F401  (the settings' variables)
from brainlab.spec.weeks import check_first_day


def local_zone() -> str:
    """The machine's IANA zone name (``TZ``, then the system's); UTC when it cannot be told.

    Fast path (no import): ``TZ`` naming a zone, or /etc/localtime linking into a zoneinfo
    folder (Linux, macOS); anything else is left to tzlocal (50 ms to import).
    """
    named = os.environ.get("TZ", "").lstrip(":")
    if named and not os.path.isabs(named):
        return named
    if not named:
        try:
            target = os.path.realpath("/etc/localtime")
        except OSError:
            target = ""
        if "/zoneinfo/" in target:
            return target.split("/zoneinfo/", 1)[1]
    try:
        from tzlocal import get_localzone_name

        return get_localzone_name() or "UTC"
    except Exception:  # noqa: BLE001  (an odd system setting: fall back, as a clock would)
        return "UTC"


def resolve_timezone(option: str | None = None, configured: str | None = None) -> str:
    """The zone to use: the option's, else the config file's, else the machine's; checked."""
    name = option or configured or local_zone()
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"timezone must be an IANA name like Europe/Paris, got {name!r}")
    name = name.strip()
    if name.upper() in ("UTC", "Z", "ETC/UTC"):
        return "UTC"
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        where = ("" if option else "brainlab.toml timezone: " if configured
                 else "this machine's time zone: ")
        raise ConfigError(f"{where}unknown time zone {name!r}: give an IANA name like"
                          " Europe/Paris, America/New_York or UTC") from None
    return name


def resolve_week_start(option: str | None = None, configured: str | None = None) -> str:
    """``monday`` (ISO weeks, the default) or ``sunday``; checked."""
    return check_first_day(option or configured)


def resolve_time(timezone: str | None = None,
                 start_of_week: str | None = None) -> tuple[str, str]:
    """A command's (zone, first day of the week), each checked.

    Each is the option's, else the settings' (:func:`settings_defaults`), else the machine's
    zone and Monday; the settings are asked only when an option is missing.
    """
    configured = (None, None) if timezone and start_of_week else settings_defaults()
    return (resolve_timezone(timezone, None if timezone else configured[0]),
            resolve_week_start(start_of_week, None if start_of_week else configured[1]))


def settings_defaults() -> tuple[str | None, str | None]:
    """``timezone`` and ``start_of_week`` of the process's settings (None when unset).

    :func:`brainlab.settings.current`: ``$BRAINLAB_TIMEZONE``/``$BRAINLAB_START_OF_WEEK``,
    else the settings file's (``--config``, ``$BRAINLAB_CONFIG``, ./brainlab.toml), as the
    command that started this process resolved them.
    """
    from brainlab.common.paths import config_requested

    if not config_requested():  # the usual case: no TOML parser, no settings code to import
        return None, None
    from brainlab.settings import current

    settings = current()
    return settings.timezone, settings.start_of_week


def kernel_timezone(option: str | None = None) -> str:
    """The zone of a notebook: ``option`` (its parameter), else the settings' (:func:`resolve_time`)."""
    return resolve_time(option or None, "monday")[0]


def kernel_week_start(option: str | None = None) -> str:
    """The first day of a notebook's weeks: ``option``, else the settings', else monday."""
    return resolve_week_start(option or None, None if option else settings_defaults()[1])


def local_sql(column: str) -> str:
    """SQL: the UTC timestamp ``column`` as a wall-clock timestamp of the zone ``$tz``."""
    return f"timezone($tz, {column} AT TIME ZONE 'UTC')"
