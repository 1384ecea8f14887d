"""The plain-text view of a tuning result (``brainlab tune``; ``--json`` prints the data itself)."""

from __future__ import annotations

import math

LABELS = {
    "precision": "precision", "recall": "recall", "lift": "lift",
    "alerts_per_week": "alerts/week", "informedness": "informedness",
    "integrated_share": "integrated", "sessions_per_integrated": "sessions/integrated",
    "tokens_per_integrated": "tokens/integrated", "wakeups_per_week": "wake-ups/week",
    "abandoned_share": "abandoned",
}


def number(value) -> str:
    """A figure as a person reads it: 3 significant digits, thousands separated."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}" if abs(value) >= 1 else f"{value:.3f}"


def triple(cell) -> str:
    """[value, low, high] as 'value [low, high]'."""
    if not cell:
        return "n/a"
    value, low, high = cell
    return f"{number(value)} [{number(low)}, {number(high)}]"


def signed(cell) -> str:
    """A difference [value, low, high] with signs."""
    if not cell or cell[0] is None:
        return "n/a"

    def one(v):
        return "n/a" if v is None else ("+" if v > 0 else "") + number(v)

    return f"{one(cell[0])} [{one(cell[1])}, {one(cell[2])}]"


def _name(candidate: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in candidate["changes"].items())


def format_result(result: dict, show_all: bool = False) -> str:
    """The result as lines: label, split, held-out figures with intervals, the decision."""
    lines = []
    label = result["label"]
    lines.append(f"tune {result['target']}")
    lines.append(f"label: {label['definition']}")
    counts = {k: v for k, v in label.items() if isinstance(v, int)}
    if counts:
        lines.append("  " + ", ".join(f"{v:,} {k}" for k, v in counts.items()))
    if label.get("alert"):
        lines.append(f"alert: {label['alert']}")
    split = result.get("split") or {}
    if "selection_weeks" in split:
        folds = len(split.get("folds", [])) - 1
        lines.append(f"split: {split['weeks']} weeks; select on {split['selection_weeks']} "
                     f"(forward chaining, {folds} fold(s) of one week), confirm on "
                     f"{split['confirm_weeks']}, never used for selection")
        lines.append(f"intervals: {split['intervals']}")
    figures = result.get("figures") or []
    if result.get("base_rate"):
        lines.append(f"held out (the confirm weeks): base rate {triple(result['base_rate'])}")
    elif "selection_weeks" in split:
        lines.append("held out (the confirm weeks):")
    if figures and "selection_weeks" in split:
        objective = result.get("objective")
        rows = [("defaults", result["defaults"], None)]
        shown = result["candidates"] if show_all else [
            c for c in result["candidates"] if c["changes"] == result.get("selected")]
        rows += [(_name(c), c, c.get("difference")) for c in shown]
        width = max(len(r[0]) for r in rows) + 2
        for name, row, difference in rows:
            cells = [f"{LABELS.get(f, f)} {triple(row.get(f))}" for f in figures]
            lines.append(f"  {name:<{width}}" + "; ".join(cells))
            if difference:
                lines.append(" " * (width + 2) + "difference from the defaults: " + "; ".join(
                    f"{LABELS.get(f, f)} {signed(difference.get(f))}" for f in figures
                    if f == objective or not objective or show_all))
        if not show_all and len(result["candidates"]) > len(shown):
            lines.append(f"  ({len(result['candidates']) - len(shown)} other candidates: "
                         "--all lists them, --json gives every figure)")
    sweep = result.get("sweep")
    if sweep:
        same = "alert" if result.get("target") != "tickets" else "replay"
        lines.append(f"grid: {sweep['rows']} one-value changes; {sweep['identical_rows']} of "
                     f"them {same} exactly like another (or the defaults): "
                     f"{sweep['distinct_alert_sets']} distinct results")
    if result.get("no_effect"):
        lines.append("no effect in this range: " + ", ".join(result["no_effect"]))
    for note in result.get("notes", []):
        lines.append(f"note: {note}")
    lines.append(result["reason"])
    return "\n".join(lines)
