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

from brainlab.common.paths import TZ_ENV, WEEK_ENV  # noqa: F401  (the settings' variables)
from brainlab.spec.weeks import check_first_day


def local_zone() -> str:
    """The machine's zone (:func:`brainlab.store.zones.machine_zone`): UTC when it is no zone."""
    from brainlab.store.zones import machine_zone

    return machine_zone()


def resolve_timezone(option: str | None = None, configured: str | None = None) -> str:
    """The zone to use: the option's, else the settings', else the machine's; checked.

    One check for every zone (:func:`brainlab.store.zones.check_zone`, which the settings use
    too): a name Python and DuckDB both know, or converted, or one ``Error:`` line.
    """
    from brainlab.store.zones import check_zone

    if option:
        return check_zone(option, "")  # the user's own option: the message need not name it
    if configured:
        return check_zone(configured, "settings timezone")
    return local_zone()


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
