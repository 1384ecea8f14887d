"""The one typed ``key=value`` validator: thresholds, regulator rules and policies use it.

``parse_overrides`` reads ``["key=value", ...]`` (numbers and true/false parsed),
``typed_value`` checks one value against its default's type, and ``replace_fields`` applies
checked changes to a frozen dataclass (:class:`~brainlab.spec.thresholds.Thresholds`,
:class:`~brainlab.spec.regulator.RegulatorRules`). A value of the wrong type would only fail
later, deep in a replay, with a traceback; here it is a ConfigError naming the key.
"""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any, TypeVar

from brainlab.spec.errors import ConfigError

T = TypeVar("T")


def _is_flag(value: Any) -> bool:
    """True for Python and numpy booleans (numpy not imported: read commands start fast)."""
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def typed_value(what: str, default: Any, value: Any, non_negative: bool = False) -> Any:
    """``value`` as the type of ``default`` (a number for a number, true/false for a flag).

    Integers are accepted for float fields, integral floats for integer fields; a string
    field takes ``str(value)``. ``non_negative`` refuses a number below 0. Errors name
    ``what`` (e.g. ``threshold ratio_window``).
    """
    if isinstance(default, bool):
        if not _is_flag(value):
            raise ConfigError(f"{what} expects true or false, got {value!r}")
        return bool(value)
    if isinstance(default, int | float):
        if _is_flag(value) or not isinstance(value, numbers.Real):
            raise ConfigError(f"{what} expects a number, got {value!r}")
        if isinstance(default, int):
            if not float(value).is_integer():
                raise ConfigError(f"{what} expects an integer, got {value!r}")
            value = int(value)
        else:
            value = float(value)
        if non_negative and value < 0:
            raise ConfigError(f"{what} must be >= 0, got {value}")
        return value
    if isinstance(default, str):
        return str(value)
    return value


def replace_fields(obj: T, noun: str, changes: dict[str, Any], non_negative: bool = False) -> T:
    """A copy of the frozen dataclass ``obj`` with ``changes`` checked and applied.

    An unknown key raises ``unknown <noun>(s): ...; known: [...]``; a value of the wrong
    type ``<last word of noun> <key> expects ...`` (see :func:`typed_value`).
    """
    known = {f.name for f in dataclasses.fields(obj)}
    unknown = sorted(set(changes) - known)
    if unknown:
        raise ConfigError(f"unknown {noun}(s): {', '.join(unknown)}; known: {sorted(known)}")
    word = noun.split()[-1]
    clean = {name: typed_value(f"{word} {name}", getattr(obj, name), value, non_negative)
             for name, value in changes.items()}
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
