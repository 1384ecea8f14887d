"""How sure a broker replay is, and whether it holds up against what really happened.

- :func:`intervals`: paired percentile-bootstrap intervals over sprints (the resampling unit)
  for each policy's figures and for its difference from the ``recorded`` policy; the same
  resample for every policy, so differences are paired. Two policies whose differences all
  lie within their intervals are *indistinguishable*, never ranked.
- :func:`backtest`: the ``recorded`` policy replayed on the recorded history against the breath
  metrics the broker printed in its expire blocks (SPEC §4.4), per figure.
- :func:`find_change` / :func:`change_check`: where the recorded source maps switch from one
  policy to another on a date (or where ``--change-date DAY --to POLICY`` says so), the weeks
  before replayed under the new policy against what the weeks after actually show.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from brainlab.common.errors import SimulationError
from brainlab.sim.intervals import excludes_zero, percentile_interval, triple
from brainlab.sim.named_change import change_day
from brainlab.sim.policies import make_policy
from brainlab.sim.sprintset import SprintSet

DEFAULT_DRAWS = 500
LEVEL = 0.90
FIGURES = ("tokens", "miss_rate", "waste_rate", "alerts")
# the figures whose paired difference decides "distinguishable" (alerts follow thresholds)
DECIDING = ("tokens", "miss_rate", "waste_rate")
# sums per sprint the figures are ratios of
_SUMS = ("referenced", "misses", "loaded", "waste", "tokens", "alerts", "agents")
CHUNK_CELLS = 4_000_000  # resample counts held at once (draws x sprints)


def _rng(seed: int, *stream: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, *stream])))


GROUP_FROM = 20_000  # from this many sprints on, they are resampled in random groups
GROUPS = 5_000


def resample_weights(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    """(size, n) counts: how often each of n units is drawn in each of ``size`` resamples."""
    flat = rng.integers(0, n, size=(size, n)) + (np.arange(size) * n)[:, None]
    return np.bincount(flat.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)


def _figures(sums: np.ndarray) -> np.ndarray:
    """(..., 7 sums) -> (..., 4 figures) in FIGURES order (ratios NaN over nothing)."""
    ref, miss, loaded, waste, tokens, alerts = (sums[..., i] for i in range(6))
    with np.errstate(divide="ignore", invalid="ignore"):
        miss_rate = np.where(ref > 0, miss / np.where(ref > 0, ref, 1), np.nan)
        waste_rate = np.where(loaded > 0, waste / np.where(loaded > 0, loaded, 1), np.nan)
    return np.stack([tokens, miss_rate, waste_rate, alerts], axis=-1)


_SUM_COLUMNS = (("referenced",), ("misses",), ("loaded",), ("waste",),
                ("tokens_loaded", "tokens_miss"), ("alerts_fired",), ("agents",))


def sum_columns(result, labels: Sequence[str]) -> list[np.ndarray]:
    """The per-sprint sums of a replay as one array per (policy, sum), policy-major.

    The replay stacks its policies' sprint frames in ``result.summary``'s order, each with
    the same sprints in the same order: each (policy, sum) is a contiguous slice, no copy.
    """
    frame = result.sprints
    order = list(result.summary["policy"])
    n = len(frame) // max(len(order), 1)  # each policy's sprints, in the same order
    columns = []
    for names in _SUM_COLUMNS:
        column = frame[names[0]].to_numpy(dtype=float)
        if len(names) > 1:
            column = column + frame[names[1]].to_numpy(dtype=float)
        columns.append(column)
    at = [order.index(label) for label in labels]
    return [columns[k][i * n:(i + 1) * n] for i in at for k in range(len(_SUMS))]


def sprint_sums(result, labels: Sequence[str]) -> np.ndarray:
    """(sprints, policies, 7) per-sprint sums of a replay (``ReplayResult.sprints``)."""
    columns = sum_columns(result, labels)
    n = len(columns[0]) if columns else 0
    return np.stack(columns, axis=-1).reshape(n, len(labels), len(_SUMS)) if columns \
        else np.empty((0, len(labels), len(_SUMS)))


def _unit_totals(columns: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """(units, columns): the resampling units' totals of each column (see :func:`_draw_sums`).

    Fewer than GROUP_FROM rows: the rows themselves. Else the rows dealt at random into
    GROUPS groups (one permutation), each column's group totals one bincount over it; every
    value is a sum of whole counts and quarter tokens, exact in any order.
    """
    n = len(columns[0])
    if n >= GROUP_FROM:
        group = rng.permutation(n) % GROUPS
        return np.stack([np.bincount(group, weights=c, minlength=GROUPS) for c in columns],
                        axis=1)
    return np.stack(columns, axis=1)


def _resample(flat: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """(draws, columns) bootstrap sums of the unit totals: count matrices times ``flat``."""
    units = flat.shape[0]
    out = np.empty((draws, flat.shape[1]))
    step = max(1, CHUNK_CELLS // max(units, 1))
    for lo in range(0, draws, step):
        size = min(step, draws - lo)
        out[lo:lo + size] = resample_weights(rng, units, size) @ flat
    return out


def _draw_sums(values: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """(draws, ...) resampled sums of ``values`` (units on axis 0), in memory-bounded chunks.

    Up to GROUP_FROM units, each draw resamples the units with replacement. From there the
    units are first dealt at random into GROUPS groups and the group totals resampled: the
    groups are independent and identically distributed, so this is the same bootstrap of a
    sum (and of a ratio of sums) with GROUPS units, at a fraction of the cost.
    """
    n = values.shape[0]
    flat = values.reshape(n, -1)
    if n >= GROUP_FROM:
        flat = _unit_totals([np.ascontiguousarray(flat[:, j]) for j in range(flat.shape[1])],
                            rng)
    return _resample(flat, draws, rng).reshape((draws, *values.shape[1:]))


@dataclass
class Intervals:
    """Per policy and figure: estimate, interval, paired difference to the baseline."""

    table: pd.DataFrame  # policy, figure, value, low, high, diff, diff_low, diff_high
    indistinguishable: dict[str, list[str]]  # policy -> policies within its intervals
    baseline: str | None
    draws: int
    level: float

    def rows(self) -> list[dict]:
        """One dict per policy: each figure and its difference as [value, low, high]."""
        out = []
        for policy, group in self.table.groupby("policy", sort=False):
            row: dict = {"policy": policy}
            diff: dict = {}
            for rec in group.to_dict("records"):
                row[rec["figure"]] = triple(rec["value"], rec["low"], rec["high"])
                diff[rec["figure"]] = triple(rec["diff"], rec["diff_low"], rec["diff_high"])
            row["difference_from_recorded"] = diff
            row["distinguishable_from_recorded"] = _distinguishable(group) \
                if self.baseline and policy != self.baseline else False
            row["indistinguishable_from"] = self.indistinguishable.get(policy, [])
            out.append(row)
        return out


def _distinguishable(group: pd.DataFrame) -> bool:
    deciding = group[group["figure"].isin(DECIDING)]
    return any(excludes_zero(lo, hi) for lo, hi in
               zip(deciding["diff_low"], deciding["diff_high"], strict=True))


def intervals(result, baseline: str = "recorded", draws: int = DEFAULT_DRAWS, seed: int = 0,
              level: float = LEVEL) -> Intervals:
    """Paired bootstrap intervals over sprints for every policy of a broker replay."""
    if draws < 1:
        raise SimulationError("draws must be at least 1")
    labels = list(result.summary["policy"])
    columns = sum_columns(result, labels)  # (policy, sum) slices: no (sprints, P, 7) copy
    shape = (len(labels), len(_SUMS))
    est = _figures(np.array([c.sum() for c in columns]).reshape(shape))  # (P, F)
    rng = _rng(seed, 41)
    totals = _resample(_unit_totals(columns, rng), draws, rng)
    boot = _figures(totals.reshape((draws, *shape)))  # (B, P, F)
    low, high = percentile_interval(boot, level)
    base = labels.index(baseline) if baseline in labels else None
    rows = []
    for p, label in enumerate(labels):
        for f, figure in enumerate(FIGURES):
            row = {"policy": label, "figure": figure, "value": est[p, f],
                   "low": low[p, f], "high": high[p, f],
                   "diff": np.nan, "diff_low": np.nan, "diff_high": np.nan}
            if base is not None:
                d = boot[:, p, f] - boot[:, base, f]
                d_lo, d_hi = percentile_interval(d, level)
                row.update(diff=est[p, f] - est[base, f], diff_low=float(d_lo),
                           diff_high=float(d_hi))
            rows.append(row)
    same: dict[str, list[str]] = {label: [] for label in labels}
    deciding = [FIGURES.index(f) for f in DECIDING]
    for i, a in enumerate(labels):
        for j in range(i + 1, len(labels)):
            d_lo, d_hi = percentile_interval(boot[:, i, deciding] - boot[:, j, deciding], level)
            if not any(excludes_zero(lo, hi) for lo, hi in zip(d_lo, d_hi, strict=True)):
                same[a].append(labels[j])
                same[labels[j]].append(a)
    return Intervals(pd.DataFrame(rows), same, labels[base] if base is not None else None,
                     draws, level)


# --- back-test: the recorded policy against what the broker printed ------------------------

BREATH = ("context_load", "stale_ratio", "breath_depth", "exhale_rate")
# half the precision the expire block prints (X.X, X%, +N): a printed value is that close
PRINT_TOLERANCE = {"context_load": 0.05, "stale_ratio": 0.005, "breath_depth": 0.0,
                   "exhale_rate": 0.005}


def sprint_breath(ss: SprintSet, policy="recorded", maps=None) -> pd.DataFrame:
    """Per sprint, the breath metrics as the broker prints them (distinct files per sprint).

    context_load = files loaded / files referenced in the sprint, stale_ratio = loaded files no
    agent referenced / loaded, breath_depth = files kept, exhale_rate = released / loaded
    (SPEC §4.4); a ratio over nothing is printed 0, as the expire block does. ``maps``: the
    policy's (row, file, kept) from a replay (``ReplayResult.maps``), else it is inhaled.
    """
    first, columns = _breath_columns(ss, policy, maps)
    return pd.DataFrame({
        "sprint_id": np.asarray(ss.labels["sprint_id"].take(first), dtype=object),
        **columns,
    })


def _breath_columns(ss: SprintSet, policy="recorded", maps=None
                    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(each sprint's first row, the :func:`sprint_breath` columns but the sprint id)."""
    from brainlab.sim.broker import source_maps
    from brainlab.sim.encoding import member
    from brainlab.sim.sprintset import sorted_unique

    if maps is None:
        policy = make_policy(policy)
        policy.prepare(ss)
        _, row, file, _, kept, _ = source_maps(ss, policy)
    else:
        row, file, kept = maps
    nf, sprint = max(ss.n_files, 1), ss.row_sprint
    n = int(sprint.max()) + 1 if len(sprint) else 0
    loaded_keys = sorted_unique(sprint[row] * nf + file)
    kept_keys = sorted_unique(sprint[row[kept]] * nf + file[kept])
    ref_keys = sorted_unique(sprint[ss.ref_row] * nf + ss.ref_file)
    stale_keys = loaded_keys[~member(ref_keys, loaded_keys)]  # setdiff1d without a sort
    count = [np.bincount(k // nf, minlength=n).astype(float)
             for k in (loaded_keys, kept_keys, ref_keys, stale_keys)]
    loaded, kept_n, referenced, stale = count
    some = np.maximum(loaded, 1)
    return np.searchsorted(sprint, np.arange(n)), {
        "context_load": loaded / np.maximum(referenced, 1),
        "stale_ratio": np.where(loaded > 0, stale / some, 0.0),
        "breath_depth": kept_n,
        "exhale_rate": np.where(loaded > 0, (loaded - kept_n) / some, 0.0),
        "known": np.bincount(sprint, weights=~ss.rows["has_recorded"].to_numpy(dtype=bool),
                             minlength=n) == 0,
    }


def _printed_at(ss: SprintSet, first: np.ndarray, ids: pd.Series) -> np.ndarray:
    """Each printed sprint id's sprint index (-1: not replayed), by the sprint ids' codes.

    The ids are looked up among the encoding's categories (``encoding.index_in``), not
    through a new index of every replayed sprint's id; a sprint without an id through that
    index.
    """
    from brainlab.sim.encoding import index_in

    label = ss.labels["sprint_id"]
    codes = np.asarray(label.codes)[first]
    if (codes < 0).any():  # a sprint without an id: match it as an index of ids would
        replayed = np.asarray(label.take(first), dtype=object)
        return pd.Index(replayed).get_indexer(ids)
    sprint_of = np.full(len(label.categories) + 1, -1, dtype=np.int64)  # [-1]: not found
    sprint_of[codes] = np.arange(len(first))
    return sprint_of[index_in(ids, np.asarray(label.categories, dtype=object))]


def backtest(ss: SprintSet, draws: int = DEFAULT_DRAWS, seed: int = 0,
             level: float = LEVEL, result=None) -> pd.DataFrame:
    """Per breath figure: replayed mean with its interval, the printed mean, covered or not.

    Only sprints whose source map and expire block were recorded take part (``sprints``).
    ``result``: a replay holding ``recorded`` (its source maps are reused).
    ``covered``: the printed mean lies in the interval, widened by half the printed precision.
    """
    printed = ss.printed if ss.printed is not None else pd.DataFrame(columns=["sprint_id"])
    maps = (result.maps or {}).get("recorded") if result is not None else None
    first, replayed = _breath_columns(ss, maps=maps)
    # each printed sprint's row among the replayed ones
    at = _printed_at(ss, first, printed["sprint_id"])
    pick = np.flatnonzero(at >= 0)
    pick = pick[np.argsort(at[pick], kind="stable")]  # in replayed order, as a merge keeps
    both = pd.DataFrame({f: replayed[f][at[pick]] for f in BREATH})
    for f in BREATH:
        both[f"{f}_printed"] = printed[f].to_numpy(dtype=float)[pick]
    both = both[replayed["known"][at[pick]]]
    both = both.dropna(subset=[f"{f}_printed" for f in BREATH])
    rows = []
    if both.empty:
        return pd.DataFrame(columns=["figure", "replayed", "low", "high", "recorded",
                                     "covered", "sprints"])
    values = both[list(BREATH)].to_numpy(dtype=float)
    boot = _draw_sums(values, draws, _rng(seed, 42)) / len(both)
    low, high = percentile_interval(boot, level)
    for f, figure in enumerate(BREATH):
        recorded = float(both[f"{figure}_printed"].mean())
        tol = PRINT_TOLERANCE[figure]
        rows.append({"figure": figure, "replayed": float(values[:, f].mean()),
                     "low": float(low[f]), "high": float(high[f]), "recorded": recorded,
                     "covered": bool(low[f] - tol <= recorded <= high[f] + tol),
                     "sprints": len(both)})
    return pd.DataFrame(rows)


# --- a real change: predicted against actual -------------------------------------------------

CHANGE_FIGURES = ("miss_rate", "waste_rate", "tokens_per_agent_sprint",
                  "loaded_per_agent_sprint")
CHANGE_CANDIDATES = ("protocol", "greedy-domain", "history", "on-demand")
MIN_SIDE = 3  # sprints on each side of a change
MIN_GAIN = 0.15  # mean agreement a change must add over one policy for the whole history


def _change_figures(sums: np.ndarray) -> np.ndarray:
    ref, miss, loaded, waste, tokens, _alerts, agents = (sums[..., i] for i in range(7))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([miss / ref, waste / loaded, tokens / agents, loaded / agents], axis=-1)


def _sprint_starts(ss: SprintSet) -> pd.Series:
    """Sprint index -> start (UTC timestamp), NaT without timestamps."""
    first = ss.rows.groupby("sprint_idx", sort=True).agg(started_at=("started_at", "min"))
    return pd.to_datetime(first["started_at"], errors="coerce", utc=True)


def agreement(ss: SprintSet, policies: Sequence[str] = CHANGE_CANDIDATES) -> pd.DataFrame:
    """Per sprint with a recorded source map: mean Jaccard agreement of each policy's map."""
    from brainlab.sim.broker import source_maps

    nf = max(ss.n_files, 1)
    known = ss.rows["has_recorded"].to_numpy(dtype=bool)
    rec = np.unique(ss.rec_row * nf + ss.rec_file)
    n = ss.n_rows
    out = {}
    for name in policies:
        policy = make_policy(name)
        policy.prepare(ss)
        _, row, file, _, _, _ = source_maps(ss, policy)
        keys = np.unique(row * nf + file)
        both = np.intersect1d(keys, rec, assume_unique=True)
        inter = np.bincount(both // nf, minlength=n)
        union = np.bincount(keys // nf, minlength=n) + np.bincount(rec // nf, minlength=n) \
            - inter
        jac = np.where(union > 0, inter / np.maximum(union, 1), 1.0)
        out[policy.label] = jac
    frame = pd.DataFrame(out)
    frame["sprint_idx"] = ss.row_sprint
    frame = frame[known].groupby("sprint_idx").mean()
    frame["started_at"] = _sprint_starts(ss).reindex(frame.index)
    return frame.dropna(subset=["started_at"]).sort_values("started_at")


@dataclass(frozen=True)
class Change:
    """A change of policy on a date: found in the recorded source maps, or named."""

    day: pd.Timestamp  # the first day under the new policy (UTC)
    to: str
    before: str | None  # the policy the weeks before followed (None when named)
    found: bool  # True: found in the recorded maps; False: named with --change-date/--to


def find_change(ss: SprintSet, candidates: Sequence[str] = CHANGE_CANDIDATES) -> Change | None:
    """The day the recorded source maps switch to agreeing with another policy, if any.

    Splits the recorded sprints in time at each day boundary and keeps the split where the
    best policy before and the best after differ and together agree with the maps best; it
    must beat one policy for the whole history by MIN_GAIN mean agreement.
    """
    agree = agreement(ss, candidates)
    if len(agree) < 2 * MIN_SIDE:
        return None
    names = [c for c in agree.columns if c != "started_at"]
    values = agree[names].to_numpy()
    days = agree["started_at"].dt.floor("D").to_numpy()
    total = values.sum(axis=0)
    before = np.cumsum(values, axis=0)
    best, best_split = values.sum(axis=0).max(), None
    for k in range(MIN_SIDE, len(values) - MIN_SIDE + 1):
        if days[k] == days[k - 1]:
            continue
        b, a = before[k - 1], total - before[k - 1]
        i, j = int(np.argmax(b)), int(np.argmax(a))
        if i != j and b[i] + a[j] > best:
            best, best_split = b[i] + a[j], (k, names[i], names[j])
    # the gain, per sprint of the shorter side (a late change touches few sprints)
    if best_split is None or (best - total.max()) / min(best_split[0],
                                                        len(values) - best_split[0]) < MIN_GAIN:
        return None
    k, old, new = best_split
    return Change(pd.Timestamp(days[k]).tz_localize("UTC") if pd.Timestamp(days[k]).tzinfo
                  is None else pd.Timestamp(days[k]), new, old, True)


def change_check(ss: SprintSet, change: Change, draws: int = DEFAULT_DRAWS, seed: int = 0,
                 level: float = LEVEL, miss_overhead_tokens: float | None = None
                 ) -> pd.DataFrame:
    """Predicted (the weeks before, replayed under the new policy) against actual (after).

    Both sides take the sprints whose source maps were recorded (what the broker saw). The
    interval is a prediction interval: the bootstrap spread of the prediction over the
    sprints before, plus the spread of the actual mean over the sprints after (independent
    resamples), so ``covered`` says whether what followed lies where the replay said.
    """
    from brainlab.sim.broker import DEFAULT_MISS_OVERHEAD_TOKENS, replay

    to = make_policy(change.to).label
    labels = [to] if to == "recorded" else [to, "recorded"]
    result = replay(ss, labels, miss_overhead_tokens=DEFAULT_MISS_OVERHEAD_TOKENS
                    if miss_overhead_tokens is None else miss_overhead_tokens)
    sums = sprint_sums(result, labels)
    starts = _sprint_starts(ss).to_numpy()
    day = change.day.tz_convert("UTC") if change.day.tzinfo else change.day.tz_localize("UTC")
    after = np.asarray(pd.Series(starts) >= day)
    known = ss.rows.groupby("sprint_idx", sort=True)["has_recorded"].all().to_numpy()
    # like with like: the sprints whose source maps were recorded, on both sides
    before_sums = sums[~after & known, 0]
    after_sums = sums[after & known, labels.index("recorded")]
    if len(before_sums) < MIN_SIDE or len(after_sums) < MIN_SIDE:
        raise SimulationError(
            f"a change on {day:%Y-%m-%d} leaves {len(before_sums)} sprint(s) before and "
            f"{len(after_sums)} recorded sprint(s) after; each side needs {MIN_SIDE}")
    predicted = _change_figures(before_sums.sum(axis=0))
    actual = _change_figures(after_sums.sum(axis=0))
    pred_draws = _change_figures(_draw_sums(before_sums, draws, _rng(seed, 43)))
    act_draws = _change_figures(_draw_sums(after_sums, draws, _rng(seed, 44)))
    low, high = percentile_interval(pred_draws - (act_draws - actual), level)
    low = np.maximum(low, 0.0)  # rates, tokens and counts are never below 0
    high[:2] = np.minimum(high[:2], 1.0)  # the two rates are at most 1
    rows = []
    for f, figure in enumerate(CHANGE_FIGURES):
        defined = not (np.isnan(predicted[f]) or np.isnan(actual[f]))
        rows.append({"figure": figure, "predicted": float(predicted[f]), "low": float(low[f]),
                     "high": float(high[f]), "actual": float(actual[f]),
                     # undefined on a side (a rate over nothing loaded): nothing to check
                     "covered": bool(low[f] <= actual[f] <= high[f]) if defined else None,
                     "before_sprints": len(before_sums), "after_sprints": len(after_sums)})
    return pd.DataFrame(rows)


def named_change(day: str | None, to: str | None) -> Change | None:
    """The change ``--change-date DAY --to POLICY`` names (both or neither), or None."""
    stamp = change_day(day, to, "the day a policy changed and the policy from that day")
    if stamp is None:
        return None
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return Change(stamp, make_policy(to).label, None, False)
