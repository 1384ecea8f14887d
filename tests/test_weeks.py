"""A week's first day and label, written once (brainlab/spec/weeks.py, issue 24).

The SQL macros the store writes and Python's ``Week`` must agree on every day, across year
ends with an ISO week 53 (2020, 2026) and both first days; the weekly models follow the
``first_day`` asked for (a metabolism session on a Sunday belongs to the ISO week before,
and to the Sunday week it starts).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

import duckdb
import pytest
from conftest import ingest_brain
from test_metabolism_metrics import productive

from brainlab.common.errors import ConfigError
from brainlab.spec.weeks import MACROS, Week
from brainlab.store import query


def _days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]


@pytest.mark.parametrize("first_day", ["monday", "sunday"])
def test_sql_and_python_agree_on_every_day(first_day):
    con = duckdb.connect()
    for statement in MACROS.values():
        con.execute(statement)
    days = _days(date(2020, 12, 20), date(2021, 1, 12)) + _days(date(2026, 12, 20),
                                                                  date(2027, 1, 12))
    rows = con.execute("SELECT d, week_first_day(d, first_day := ?), week_label(d, first_day := ?),"
                       " week_label(CAST(d AS TIMESTAMP) + INTERVAL 23 HOUR, first_day := ?)"
                       " FROM unnest(?::DATE[]) t(d) ORDER BY d",
                       [first_day, first_day, first_day, days]).fetchall()
    for day, start, label, label_late in rows:
        week = Week.of(day, first_day)
        assert (start, label, label_late) == (week.start, week.label, week.label), day
        assert week.start <= day < week.end
        assert week.first_day == first_day
    if first_day == "monday":  # ISO 8601's own labels at the year ends
        assert Week.of(date(2021, 1, 3)).label == "2020-W53"
        assert Week.of(date(2027, 1, 1)).label == "2026-W53"
    else:
        assert Week.of(date(2027, 1, 1), "sunday").label == "2026-12-27"


def test_parse_names_a_week_by_iso_label_or_any_day():
    assert Week.parse("2026-W48") == Week.of(date(2026, 11, 23))
    # an ISO label with sunday: the Sunday week starting the day before that ISO Monday
    assert Week.parse("2026-W48", "sunday").label == "2026-11-22"
    assert Week.parse("2026-11-25").label == "2026-11-22"  # a day alone: a Sunday week
    assert Week.parse("2026-11-29", "monday").label == "2026-W48"  # Sunday ends an ISO week
    assert Week.parse("2026-11-22").shifted(1).label == "2026-11-29"
    assert Week.parse("2026-W01").shifted(-1).label == "2025-W52"
    for bad in ("2026-W54", "2026-13-01", "week 48", ""):
        with pytest.raises(ConfigError):
            Week.parse(bad)
    with pytest.raises(ConfigError):
        Week.of(date(2026, 1, 1), "friday")


def test_utc_bounds_are_the_zone_midnights():
    week = Week.parse("2026-W14")  # Monday 2026-03-30, the day after Paris went to summer time
    assert week.utc_bounds("UTC") == (datetime(2026, 3, 30), datetime(2026, 4, 6))
    assert week.utc_bounds("Europe/Paris") == (datetime(2026, 3, 29, 22), datetime(2026, 4, 5, 22))
    assert week.utc_bounds("America/New_York")[0] == datetime(2026, 3, 30, 4)


def test_the_weekly_models_follow_the_first_day(brain, db):
    sunday, monday = datetime(2026, 11, 29, 10, 0), datetime(2026, 11, 30, 10, 0)
    productive(brain, sunday, "sun")
    productive(brain, monday, "mon")
    ingest_brain(brain, db)

    def weeks(first_day: str) -> dict[str, int]:
        frame = query(db, "SELECT iso_week, sessions FROM weekly_health_for(first_day := ?)",
                      [first_day])
        return dict(zip(frame.iso_week, frame.sessions.astype(int), strict=True))

    assert weeks("monday") == {"2026-W48": 1, "2026-W49": 1}
    assert weeks("sunday") == {"2026-11-29": 2}
    by_category = query(db, "SELECT iso_week, sum(sessions) AS n FROM"
                            " weekly_category_health_for(first_day := 'sunday') GROUP BY ALL")
    assert by_category.iso_week.tolist() == ["2026-11-29"]
    # the views without a parameter stay ISO weeks, through the same macro
    cost = query(db, "SELECT DISTINCT week_start FROM weekly_health_for() ORDER BY 1")
    assert [d.date() if hasattr(d, "date") else d for d in cost.week_start] == [
        date(2026, 11, 23), date(2026, 11, 30)]
