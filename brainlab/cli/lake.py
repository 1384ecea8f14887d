"""Team scale: ``brainlab export``, ``attach`` and ``spark ingest-claude`` (docs/lake.md)."""

from __future__ import annotations

from pathlib import Path

import click

from brainlab.cli.root import main
from brainlab.cli.support import (
    db_option,
    handle_errors,
)
from brainlab.common.plaintext import visible


@main.command("export")
@db_option()
@click.option("--lake", required=True, help="Lake folder (created if missing).")
@click.option("--user", default=None, help="Partition user (default: the login name).")
@click.option("--machine", default=None, help="Partition machine (default: the host name).")
@handle_errors
def export_cmd(db: Path, lake: str, user: str | None, machine: str | None) -> None:
    """Write the store's raw tables into a Parquet lake, as USER on MACHINE (idempotent)."""
    from brainlab.lake import export_store

    summary = export_store(db, lake, user=user, machine=machine)
    click.echo(f"exported {sum(summary.rows.values())} rows of {len(summary.rows)} tables as"
               f" user={summary.user} machine={summary.machine} to {summary.lake}")


@main.command("attach")
@click.option("--lake", required=True, help="Lake folder or URI (s3://bucket/lake).")
@db_option()
@click.option("--user", "users", multiple=True, help="Keep only this user (repeatable).")
@click.option("--machine", "machines", multiple=True, help="Keep only this machine (repeatable).")
@handle_errors
def attach_cmd(lake: str, db: Path, users: tuple[str, ...], machines: tuple[str, ...]) -> None:
    """Make DB a store whose raw tables are views over the lake (usage, report run unchanged)."""
    from brainlab.lake import attach_lake

    summary = attach_lake(lake, db, users=users, machines=machines)
    click.echo(f"{len(summary.views)} tables attached from {summary.lake}"
               f" ({len(summary.empty)} without files stay empty); database: {db}")
    if summary.bad_files:
        click.echo(f"{len(summary.bad_files)} bad lake file(s) skipped: see brainlab errors"
                   f" --db {visible(db)}")


@main.group()
def spark() -> None:
    """Distributed ingest on Apache Spark (pip install 'brainlab[spark]', Java 17)."""


@spark.command("ingest-claude")
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--lake", required=True, help="Lake folder or URI (s3a://bucket/lake).")
@click.option("--master", default="local[2]", show_default=True, help="Spark master URL.")
@click.option("--user", default=None, help="User of a plain projects/ tree (default: login).")
@click.option("--machine", default=None, help="Machine of a plain projects/ tree (default: host).")
@click.option("--prices", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML price file overriding/adding models.")
@click.option("--prune", is_flag=True,
              help="Remove the rows of transcripts gone from ROOT (kept by default).")
@handle_errors
def spark_ingest_cmd(root: Path, lake: str, master: str, user, machine, prices, prune) -> None:
    """Ingest ROOT/<user>/<machine>/projects/ transcripts into the lake (only what is new)."""
    from brainlab.lake.spark_ingest import ingest_claude_spark, spark_session
    from brainlab.lake.staging import check_scheme

    check_scheme(lake)  # before the JVM starts: a lake pyarrow cannot write is refused
    summary = ingest_claude_spark(lambda: spark_session(master), root, lake, user=user,
                                  machine=machine, prices=prices, prune=prune)
    click.echo(f"claude {summary.read} read, {summary.unchanged} unchanged, {summary.reset}"
               f" reset, {summary.removed} removed, {summary.errors} errors,"
               f" {summary.warnings} warnings;"
               f" {summary.rows.get('cc_request_lines', 0)} request rows in touched partitions")
    for refused in summary.refused:  # a bad user folder costs only its own files
        click.echo(visible(f"{refused.path}: {refused.reason}"))
    if summary.gone > summary.removed:
        click.echo(f"{summary.gone} file(s) gone from ROOT, their rows kept (--prune removes"
                   " them)")
