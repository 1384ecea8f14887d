"""``brainlab simulate broker|regulator``: replay history under other policies and rules."""

from __future__ import annotations

from pathlib import Path

import click

from brainlab.cli.options import replay_check_options
from brainlab.cli.root import main, settings
from brainlab.cli.support import (
    db_option,
    handle_errors,
    out,
)


@main.group()
def simulate() -> None:
    """Replay recorded history under other policies, rule sets and thresholds."""


MAX_DRAWS = 1_000_000  # bootstrap draws: 1,000 give intervals to 0.1%; past this, hours of CPU
MAX_SEED = 2**63 - 1  # numpy takes any non-negative integer; a seed is a label, not a size


def _bounded(draws: int, seed: int) -> None:
    """``--draws`` past :data:`MAX_DRAWS` (a run that never ends) or a huge ``--seed``: refused."""
    from brainlab.common.errors import SimulationError

    if draws > MAX_DRAWS:
        raise SimulationError(f"--draws must be at most {MAX_DRAWS:,} (1,000 give intervals"
                              " to 0.1%)")
    if seed > MAX_SEED:
        raise SimulationError(f"--seed must be at most {MAX_SEED:,}")


@simulate.command("broker")
@click.option("--policy", "policies", multiple=True, metavar="NAME[:k=v,...]",
              help="A policy to replay (repeatable), e.g. protocol, history:k=3. "
                   "Default: protocol, greedy-domain, on-demand, history, recorded "
                   "(recorded is always added: the baseline).")
@click.option("--contracts", type=click.Choice(["declared", "inferred", "all"]),
              default="declared", show_default=True,
              help="Sprints of projects with a declared contract (projets/<p>.md), with one "
                   "inferred from the directory layout, or both.")
@click.option("--draws", type=int, default=500, show_default=True,
              help="Bootstrap draws over sprints for the intervals.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@replay_check_options(
    backtest="the recorded policy against the breath metrics the broker printed",
    changed="policy", unit="weeks", to_metavar="POLICY", to_example="policy",
    json_keys="policies, total, replayed, skipped, contracts, missed_files, backtest, "
              "change_check")
@click.option("--out", "out_file", type=click.Path(path_type=Path), default=None,
              help="Write the per-agent rows here (.csv or .parquet).")
@click.option("--project", default=None, help="Replay one project only.")
@click.option("--miss-overhead", type=float, default=None,
              help="Tokens added per miss (on-demand read turn), default 250.")
@click.option("--default-bytes", type=float, default=None,
              help="Size assumed for files without a recorded size, default 8000.")
@click.option("--threshold", "thresholds", multiple=True, metavar="KEY=VALUE",
              help="Override a breath threshold, e.g. stale_ratio_max=0.4.")
@db_option()
@handle_errors
def simulate_broker(policies, contracts, draws, seed, backtest, change_date, change_to,
                    as_json, out_file, project, miss_overhead, default_bytes, thresholds,
                    db) -> None:
    """Replay sprints under context-broker policies and compare them side by side (SPEC §4.5)."""
    import json

    from brainlab.common.errors import SimulationError
    from brainlab.settings import parse_overrides
    from brainlab.sim import broker, broker_output
    from brainlab.sim.broker_checks import named_change
    from brainlab.sim.policies import make_policy

    # every option is checked before the store is read: a bad value is its own error
    change = named_change(change_date, change_to)
    if draws < 1 or seed < 0:
        raise SimulationError("--draws must be at least 1 and --seed at least 0")
    _bounded(draws, seed)
    if miss_overhead is not None and not 0 <= miss_overhead < float("inf"):
        raise SimulationError(f"miss overhead must be a finite number >= 0 tokens, got"
                              f" {miss_overhead}")
    if default_bytes is not None and not 0 <= default_bytes < float("inf"):
        raise SimulationError(f"--default-bytes must be a finite number >= 0, got {default_bytes}")
    chosen = [make_policy(p) for p in (policies or broker.DEFAULT_POLICIES)]
    limits = settings().thresholds.replace(**parse_overrides(list(thresholds)))
    kwargs = {} if default_bytes is None else {"default_bytes": default_bytes}
    sprints = broker.load_sprints(db, project=project, contracts=contracts, **kwargs)
    report, result = broker_output.broker_report(
        sprints, chosen, draws=draws, seed=seed, backtest=True, change=change,
        miss_overhead_tokens=miss_overhead, thresholds=limits)
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, allow_nan=False))
    else:
        if not backtest:
            report = {k: v for k, v in report.items() if k != "backtest"}
        click.echo(broker_output.format_report(report, width=out.width))
    if out_file:
        result.write(out_file)
        out.print(f"wrote {len(result.rows)} rows to {out_file}")


@simulate.command("regulator")
@db_option()
@click.option("--rules", "rules", multiple=True, default=("default",), show_default=True,
              help="Rule set: a variant (default, strict, lenient) and/or key=value overrides,"
                   " comma-separated. Repeat to compare several (default, the recorded rules,"
                   " is always replayed: the baseline).")
@click.option("--draws", type=int, default=1000, show_default=True, help="Bootstrap draws.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@replay_check_options(
    backtest="the recorded rules against the tickets' recorded figures", changed="rules",
    unit="tickets", to_metavar="RULES",
    to_example="rule set (e.g. max_relance_same_stop=2)",
    json_keys="rule_sets, total, replayed, skipped, backtest, change_check")
@click.option("--out", "out_file", type=click.Path(path_type=Path), default=None,
              help="Write one row per rule set (.csv or .parquet).")
@click.option("--per-ticket", "per_ticket", type=click.Path(path_type=Path), default=None,
              help="Write one row per ticket and rule set (.csv or .parquet).")
@handle_errors
def simulate_regulator(db: Path, rules: tuple[str, ...], draws: int, seed: int,
                       backtest: bool, change_date: str | None, change_to: str | None,
                       as_json: bool, out_file: Path | None, per_ticket: Path | None) -> None:
    """Replay ticket circuits under other regulator rules (SPEC §6.5): wake-ups, loops, outcomes."""
    import json

    from brainlab.common.errors import SimulationError
    from brainlab.sim import regulator_checks
    from brainlab.sim.regulator import write_frame
    from brainlab.spec.regulator import named_rule_sets

    change = regulator_checks.named_change(change_date, change_to)
    rule_sets = named_rule_sets(list(rules), base=settings().rules)
    if draws < 1:
        raise SimulationError("draws must be at least 1")
    _bounded(draws, max(seed, 0))
    if seed < 0:
        raise SimulationError(f"seed must be a non-negative integer, got {seed}")
    history = regulator_checks.load_history(db)
    report, result = regulator_checks.regulator_report(history, rule_sets, draws=draws,
                                                       seed=seed, change=change)
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, allow_nan=False))
    else:
        if not backtest:
            report = {k: v for k, v in report.items() if k != "backtest"}
        click.echo(regulator_checks.format_report(report, result, width=out.width))
    if out_file:
        write_frame(result.summary, out_file)
        out.print(f"wrote {out_file}")
    if per_ticket:
        write_frame(result.per_ticket[["ticket", "rules", "outcome", "wakeups", "sessions",
                                       "tokens", "loop_sessions", "continued"]], per_ticket,
                    "--per-ticket")
        out.print(f"wrote {per_ticket}")
