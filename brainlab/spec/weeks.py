"""When a week starts and what it is called, written once (issue 24: ``--start-of-week``).

Weeks start on Monday and are called by their ISO 8601 label (``2026-W48``) unless Sunday is
asked for; a Sunday week is called by the date of its Sunday (``2026-11-22``), as ``brainlab
usage weekly --start-of-week sunday`` and ccusage label them. The rule is given twice, side by
side here and nowhere else: as SQL (the store writes the macros ``week_first_day`` and
``week_label`` from it; every weekly model calls them) and in Python (:class:`Week`, the
report's weeks). tests/test_weeks.py checks both agree day by day across year ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from brainlab.spec.errors import ConfigError

FIRST_DAYS = ("monday", "sunday")
# the day a week starts on, as an offset from its ISO Monday: Sunday weeks start one day early
_SHIFT_SQL = "(CASE WHEN first_day = 'sunday' THEN 1 ELSE 0 END)"
WEEK_FIRST_DAY_SQL = (f"CAST(CAST(date_trunc('week', CAST(ts AS DATE) + {_SHIFT_SQL}) AS DATE)"
                      f" - {_SHIFT_SQL} AS DATE)")
WEEK_LABEL_SQL = ("CASE WHEN first_day = 'sunday'"
                  " THEN strftime(week_first_day(ts, first_day := first_day), '%Y-%m-%d')"
                  " ELSE strftime(CAST(ts AS DATE), '%G-W%V') END")
MACROS = {  # name -> CREATE statement: the store writes them (store/schema.py)
    "week_first_day": ("CREATE OR REPLACE MACRO week_first_day(ts, first_day := 'monday') AS"
                       f" ({WEEK_FIRST_DAY_SQL})"),
    "week_label": ("CREATE OR REPLACE MACRO week_label(ts, first_day := 'monday') AS"
                   f" ({WEEK_LABEL_SQL})"),
}
ISO_RE = re.compile(r"^(\d{4})-W(\d{2})$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def check_first_day(value: str | None) -> str:
    """``monday`` (the default) or ``sunday``; anything else is a ConfigError."""
    day = (value or "monday").strip().lower()
    if day not in FIRST_DAYS:
        raise ConfigError(f"start of week must be monday or sunday, got {value!r}")
    return day


@dataclass(frozen=True)
class Week:
    """One week: its label, first day (a Monday, or a Sunday) and the first day after it."""

    label: str
    start: date
    end: date  # exclusive

    @property
    def first_day(self) -> str:
        """``monday`` for an ISO week, ``sunday`` for a Sunday week."""
        return "sunday" if self.start.weekday() == 6 else "monday"

    @classmethod
    def parse(cls, text: str, first_day: str | None = None) -> Week:
        """A week from ``2026-W48`` or a day ``2026-11-25`` (the week holding it).

        ``first_day`` None: an ISO label is a Monday week, a day a Sunday week. ``sunday``
        with an ISO label: the Sunday week starting the day before that ISO week's Monday.
        A malformed or impossible week raises ConfigError.
        """
        text = (text or "").strip()
        iso, day = ISO_RE.match(text), DATE_RE.match(text)
        if not iso and not day:
            raise ConfigError(f"a week must be an ISO week like 2026-W48 or a day like"
                              f" 2026-11-22, got {text!r}")
        try:
            if iso:
                start = date.fromisocalendar(int(iso[1]), int(iso[2]), 1)
                return cls.of(start - timedelta(days=1) if first_day == "sunday" else start,
                              first_day or "monday")
            return cls.of(date.fromisoformat(text), first_day or "sunday")
        except ValueError as exc:
            raise ConfigError(f"no such week {text!r}: {exc}") from None

    @classmethod
    def of(cls, day: date, first_day: str = "monday") -> Week:
        """The week holding ``day`` (the SQL ``week_first_day`` and ``week_label``)."""
        shift = 1 if check_first_day(first_day) == "sunday" else 0
        start = day - timedelta(days=(day.weekday() + shift) % 7)
        if shift:
            label = start.isoformat()
        else:
            year, number, _ = start.isocalendar()
            label = f"{year}-W{number:02d}"
        return cls(label, start, start + timedelta(days=7))

    def shifted(self, weeks: int) -> Week:
        """The week ``weeks`` later (negative: earlier), starting on the same day."""
        return Week.of(self.start + timedelta(days=7 * weeks), self.first_day)

    @property
    def start_at(self) -> datetime:
        """00:00 of the week's first day."""
        return datetime.combine(self.start, datetime.min.time())

    @property
    def end_at(self) -> datetime:
        """00:00 of the first day of the next week (exclusive bound)."""
        return datetime.combine(self.end, datetime.min.time())

    def utc_bounds(self, tz: str = "UTC") -> tuple[datetime, datetime]:
        """:attr:`start_at` and :attr:`end_at` in the IANA zone ``tz``, as naive UTC times.

        Transcript times are stored in UTC: a week of the user's zone is this range of them.
        """
        from zoneinfo import ZoneInfo

        zone = ZoneInfo(tz)
        return tuple(t.replace(tzinfo=zone).astimezone(UTC).replace(tzinfo=None)
                     for t in (self.start_at, self.end_at))
