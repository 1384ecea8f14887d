"""Team scale: ``brainlab export``, ``attach`` and ``spark ingest-claude`` (docs/lake.md)."""

from __future__ import annotations

from pathlib import Path

import click

from brainlab.cli.root import main
from brainlab.cli.support import db_option, handle_errors


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
    click.echo(summary.line())


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
    for line in summary.lines():
        click.echo(line)


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
    for line in summary.lines():
        click.echo(line)
