"""The one typed ``key=value`` validator: thresholds, regulator rules and policies use it.

``parse_overrides`` reads ``["key=value", ...]`` (numbers and true/false parsed),
``typed_value`` checks one value against its default's type, and ``replace_fields`` applies
checked changes to a frozen dataclass (:class:`~brainlab.spec.thresholds.Thresholds`,
:class:`~brainlab.spec.regulator.RegulatorRules`). A value of the wrong type would only fail
later, deep in a replay, with a traceback; here it is a ConfigError naming the key.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, TypeVar

from brainlab.spec.errors import ConfigError

T = TypeVar("T")


def _is_flag(value: Any) -> bool:
    """True for Python and numpy booleans (numpy not imported: read commands start fast)."""
    return isinstance(value, bool) or type(value).__name__ == "bool_"


INT64_MAX = 2**63 - 1  # what a DuckDB BIGINT (every integer setting's SQL parameter) holds
SHOWN_CHARS = 60  # a bad value is shown cut to this many characters


def shown(value: Any) -> str:
    """``repr(value)`` for an error line: a table or list by its size, a long text cut."""
    if isinstance(value, dict | list | tuple):
        return f"a {'table' if isinstance(value, dict) else 'list'} of {len(value)} item(s)"
    if isinstance(value, int) and not _is_flag(value) and abs(value) > 10**30:
        return f"a {value.bit_length()}-bit integer"
    text = repr(value) if isinstance(value, str | int | float) or _is_flag(value) \
        else f"a {type(value).__name__}"
    if len(text) > SHOWN_CHARS:
        text = f"{text[:SHOWN_CHARS]}…({len(text):,} characters)"
    return text


def typed_value(what: str, default: Any, value: Any, non_negative: bool = False,
                bounds: tuple[float, float, str] | None = None) -> Any:
    """``value`` as the type of ``default`` (a number for a number, true/false for a flag).

    Integers are accepted for float fields, integral floats for integer fields; a string
    field takes ``str(value)``. A number must be finite (``nan`` makes every comparison
    false, ``inf`` every one true) and an integer fit a BIGINT; ``non_negative`` refuses a
    number below 0, ``bounds`` (low, high, why) one outside [low, high]. Errors name ``what``
    (e.g. ``threshold ratio_window``).
    """
    if isinstance(default, bool):
        if not _is_flag(value):
            raise ConfigError(f"{what} expects true or false, got {shown(value)}")
        return bool(value)
    if isinstance(default, int | float):
        if _is_flag(value) or not isinstance(value, numbers.Real):
            raise ConfigError(f"{what} expects a number, got {shown(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{what} expects a finite number, got {shown(value)}")
        if isinstance(default, int):
            if not float(value).is_integer():
                raise ConfigError(f"{what} expects an integer, got {shown(value)}")
            value = int(value)
            if abs(value) > INT64_MAX:
                raise ConfigError(f"{what} is out of range: {shown(value)}")
        else:
            value = float(value)
        if non_negative and value < 0:
            raise ConfigError(f"{what} must be >= 0, got {shown(value)}")
        if bounds is not None and not bounds[0] <= value <= bounds[1]:
            low, high, why = bounds
            raise ConfigError(f"{what} must be between {low:g} and {high:g} ({why}),"
                              f" got {shown(value)}")
        return value
    if isinstance(default, str):
        if not isinstance(value, str | int | float) or _is_flag(value):
            raise ConfigError(f"{what} expects a word, got {shown(value)}")
        return str(value)
    return value


def replace_fields(obj: T, noun: str, changes: dict[str, Any], non_negative: bool = False,
                   ranges: dict[str, tuple[float, float, str]] | None = None,
                   choices: dict[str, tuple[str, ...]] | None = None) -> T:
    """A copy of the frozen dataclass ``obj`` with ``changes`` checked and applied.

    An unknown key raises ``unknown <noun>(s): ...; known: [...]``; a value of the wrong
    type ``<last word of noun> <key> expects ...`` (see :func:`typed_value`); ``ranges``
    gives a field its (low, high, why), ``choices`` a word field its allowed words.
    """
    known = {f.name for f in dataclasses.fields(obj)}
    unknown = sorted(set(changes) - known)
    if unknown:
        names = ", ".join(u if len(u) <= SHOWN_CHARS else f"{u[:SHOWN_CHARS]}…({len(u):,}"
                          " characters)" for u in unknown[:5])
        raise ConfigError(f"unknown {noun}(s): {names}; known: {sorted(known)}")
    word = noun.split()[-1]
    ranges, choices = ranges or {}, choices or {}
    clean = {}
    for name, value in changes.items():
        clean[name] = typed_value(f"{word} {name}", getattr(obj, name), value, non_negative,
                                  ranges.get(name))
        if name in choices and clean[name] not in choices[name]:
            raise ConfigError(f"{word} {name} expects one of {', '.join(choices[name])},"
                              f" got {shown(value)}")
    return dataclasses.replace(obj, **clean)


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """Turn ``["key=value", ...]`` into a dict, parsing numbers and booleans."""
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ConfigError(f"expected key=value, got {pair!r}")
        key, raw = pair.split("=", 1)
        out[key.strip()] = _parse_scalar(raw.strip())
    return out


def _parse_scalar(raw: str) -> Any:
    """``true``/``false``, an integer, a float, else the string itself."""
    low = raw.lower()
    if low in {"true", "false"}:
        return low == "true"
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw
