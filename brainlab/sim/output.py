"""Write a replay's frames as CSV or Parquet (by suffix), with a clear error when it cannot."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from brainlab.common.errors import SimulationError

SUFFIXES = (".csv", ".parquet")


def check_path(path: str | os.PathLike, option: str = "--out") -> Path:
    """``path`` as a Path, or a SimulationError when its suffix is neither .csv nor .parquet."""
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise SimulationError(f"{option} must end in .csv or .parquet, got {path.name}")
    return path


def write_frame(frame: pd.DataFrame, path: str | os.PathLike, option: str = "--out") -> None:
    """Write ``frame`` to ``path`` (folders made as needed); an OS failure is one clear error."""
    path = check_path(path, option)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix.lower() == ".parquet":
            frame.to_parquet(path, index=False)
        else:
            frame.to_csv(path, index=False)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise SimulationError(f"cannot write {option} {path}: {reason}") from exc
