"""``brainlab simulate broker|regulator``: replay history under other policies and rules."""

from __future__ import annotations

from pathlib import Path

import click

from brainlab.cli.root import main, settings
from brainlab.cli.support import (
    db_option,
    handle_errors,
    out,
)


@main.group()
def simulate() -> None:
    """Replay recorded history under other policies, rule sets and thresholds."""


@simulate.command("broker")
@click.option("--policy", "policies", multiple=True, metavar="NAME[:k=v,...]",
              help="A policy to replay (repeatable), e.g. protocol, history:k=3. "
                   "Default: protocol, greedy-domain, on-demand, history, recorded.")
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
def simulate_broker(policies, out_file, project, miss_overhead, default_bytes, thresholds,
                    db) -> None:
    """Replay sprints under context-broker policies and compare them side by side (SPEC §4.5)."""
    from brainlab.settings import parse_overrides
    from brainlab.sim import broker

    kwargs = {} if default_bytes is None else {"default_bytes": default_bytes}
    sprints = broker.load_sprints(db, project=project, **kwargs)
    result = broker.replay(
        sprints, list(policies) or list(broker.DEFAULT_POLICIES),
        miss_overhead_tokens=broker.DEFAULT_MISS_OVERHEAD_TOKENS if miss_overhead is None
        else miss_overhead,
        thresholds=settings().thresholds.replace(**parse_overrides(list(thresholds))))
    click.echo(broker.format_summary(result, width=out.width))
    if out_file:
        result.write(out_file)
        out.print(f"wrote {len(result.rows)} rows to {out_file}")



@simulate.command("regulator")
@db_option()
@click.option("--rules", "rules", multiple=True, default=("default",), show_default=True,
              help="Rule set: a variant (default, strict, lenient) and/or key=value overrides,"
                   " comma-separated. Repeat to compare several.")
@click.option("--draws", type=int, default=1000, show_default=True, help="Bootstrap draws.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@click.option("--out", "out_file", type=click.Path(path_type=Path), default=None,
              help="Write one row per rule set (.csv or .parquet).")
@click.option("--per-ticket", "per_ticket", type=click.Path(path_type=Path), default=None,
              help="Write one row per ticket and rule set (.csv or .parquet).")
@handle_errors
def simulate_regulator(db: Path, rules: tuple[str, ...], draws: int, seed: int,
                       out_file: Path | None, per_ticket: Path | None) -> None:
    """Replay ticket circuits under other regulator rules (SPEC §6.5): wake-ups, loops, outcomes."""
    from brainlab.sim.regulator import format_summary, load_journals, replay, write_frame
    from brainlab.spec.regulator import named_rule_sets

    rule_sets = named_rule_sets(list(rules), base=settings().rules)
    result = replay(load_journals(db), rule_sets, draws=draws, seed=seed)
    click.echo(format_summary(result))
    if out_file:
        write_frame(result.summary, out_file)
        out.print(f"wrote {out_file}")
    if per_ticket:
        write_frame(result.per_ticket[["ticket", "rules", "outcome", "wakeups", "sessions",
                                       "tokens", "loop_sessions", "continued"]], per_ticket,
                    "--per-ticket")
        out.print(f"wrote {per_ticket}")
