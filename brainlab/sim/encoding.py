"""Column encoding helpers for the replay (Arrow/numpy, no per-row Python).

Strings become integer codes once (``encode``, ``index_in``), list columns are flattened by
Arrow (``explode_lists``), and set membership on sorted int64 keys is a binary search
(``member``). Used by :mod:`brainlab.sim.sprintset`, the policies and the replay.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

_LIST_TYPES = frozenset({list, tuple, np.ndarray, type(None), float})


def _arrow(values) -> pa.Array | None:
    """A column as an Arrow array (zero-copy for Arrow-backed strings), or None if mixed."""
    try:
        arr = pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
        return None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr


def encode(values) -> tuple[np.ndarray, np.ndarray]:
    """(codes, uniques): codes in order of first appearance; a missing value gets its own code."""
    arr = _arrow(values)
    if arr is None or not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)
                           or pa.types.is_null(arr.type)):
        raw = values.to_numpy(dtype=object) if isinstance(values, pd.Series) else \
            np.asarray(values, dtype=object)
        codes, uniques = pd.factorize(raw, use_na_sentinel=False)
        return codes.astype(np.int64), np.asarray(uniques, dtype=object)
    if pa.types.is_null(arr.type):
        return np.zeros(len(arr), dtype=np.int64), np.array([None] * min(len(arr), 1),
                                                            dtype=object)
    encoded = pc.dictionary_encode(arr, null_encoding="encode")
    return (encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64),
            encoded.dictionary.to_numpy(zero_copy_only=False).astype(object))


def _is_text(arr: pa.Array) -> bool:
    return pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)


def index_in(values, names: np.ndarray) -> np.ndarray:
    """Position of each value in ``names`` (-1 when absent); a missing value matches None.

    Strings meet strings in Arrow whatever their offsets' width (a pandas str column is
    ``large_string``, names from objects ``string``); other mixes go through pandas.
    """
    arr = _arrow(values)
    lookup = _arrow(names)
    if arr is not None and lookup is not None and _is_text(arr) and _is_text(lookup) \
            and arr.type != lookup.type:
        arr, lookup = arr.cast(pa.large_string()), lookup.cast(pa.large_string())
    if arr is None or lookup is None or arr.type != lookup.type and not (
            pa.types.is_null(arr.type) or pa.types.is_null(lookup.type)):
        codes, uniques = encode(values)
        index = pd.Index(np.asarray(names, dtype=object)).get_indexer(uniques)
        return index[codes] if len(codes) else np.zeros(0, dtype=np.int64)
    if pa.types.is_null(lookup.type):
        lookup = lookup.cast(arr.type) if not pa.types.is_null(arr.type) else lookup
    if pa.types.is_null(arr.type):
        arr = arr.cast(lookup.type)
    found = pc.index_in(arr, value_set=lookup)
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def explode_lists(column: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, value, known) for a list column: one (row, value) per entry of every known list.

    known[i] says row i holds a list (possibly empty), as opposed to NULL/NaN (unknown).
    """
    n = len(column)
    if n == 0 or column.isna().all():
        return np.zeros(0, dtype=np.int64), np.array([], dtype=object), np.zeros(n, dtype=bool)
    values = column.to_numpy(dtype=object)
    if set(map(type, values)) <= _LIST_TYPES:
        try:
            arr = pa.array(values, type=pa.list_(pa.string()), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
            arr = None
        if arr is not None:
            rows = pc.list_parent_indices(arr).to_numpy(zero_copy_only=False)
            flat = pc.list_flatten(arr).to_numpy(zero_copy_only=False).astype(object)
            known = arr.is_valid().to_numpy(zero_copy_only=False)
            return rows.astype(np.int64), flat, known
    known = np.fromiter((isinstance(v, (list, tuple, np.ndarray)) for v in values), dtype=bool,
                        count=n)
    lengths = np.fromiter((len(v) if k else 0 for v, k in zip(values, known, strict=True)),
                          dtype=np.int64, count=n)
    flat = [x for v, k in zip(values, known, strict=True) if k for x in v]
    return (np.repeat(np.arange(n), lengths), np.array(flat + [None], dtype=object)[:-1],
            known)


def member(sorted_keys: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Whether each needle is in sorted_keys (binary search; np.isin sorts both sides)."""
    if len(sorted_keys) == 0:
        return np.zeros(len(needles), dtype=bool)
    pos = np.searchsorted(sorted_keys, needles)
    np.minimum(pos, len(sorted_keys) - 1, out=pos)
    return sorted_keys[pos] == needles


def categorical(codes: np.ndarray, names: np.ndarray) -> pd.Categorical:
    """Codes into ``names`` as a Categorical with sorted categories; None/NaN names -> NA."""
    names = np.asarray(names, dtype=object)
    valid = ~pd.isna(names)
    present = names[valid]
    if _all_str(present):
        order = np.asarray(pc.sort_indices(pa.array(present, type=pa.string())))
    else:
        order = np.argsort(present, kind="stable")
    rank = np.full(len(names), -1, dtype=np.int64)
    rank[np.flatnonzero(valid)[order]] = np.arange(len(order))
    return pd.Categorical.from_codes(rank[codes] if len(codes) else codes.astype(np.int64),
                                     categories=pd.Index(present[order], dtype=object))


def _all_str(values: np.ndarray) -> bool:
    return set(map(type, values)) == {str}
