"""The ``spark-submit`` entry point of the Spark ingest (the cluster gives master and config).

``spark-submit [--master ...] brainlab/lake/spark_main.py ROOT --lake URI [--user U]
[--machine M] [--prices FILE] [--prune]``; see docs/lake.md section 6 for the options a team
sets (master, executors, memory, ``s3a://`` lakes and the hadoop-aws package).
"""

from __future__ import annotations

import argparse
import sys

from brainlab.common.errors import BrainlabError
from brainlab.common.plaintext import visible


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the ingest in the submitted application, print one summary line."""
    from brainlab.lake.spark_ingest import ingest_claude_spark, spark_session
    from brainlab.lake.staging import check_scheme

    parser = argparse.ArgumentParser(prog="spark_main.py", description=__doc__)
    parser.add_argument("root")
    parser.add_argument("--lake", required=True)
    parser.add_argument("--user")
    parser.add_argument("--machine")
    parser.add_argument("--prices")
    parser.add_argument("--prune", action="store_true",
                        help="remove the rows of transcripts gone from ROOT (kept by default)")
    args = parser.parse_args(argv)
    try:
        check_scheme(args.lake)  # before any work: a lake pyarrow cannot write is refused
        summary = ingest_claude_spark(spark_session(master=None), args.root, args.lake,
                                      user=args.user, machine=args.machine, prices=args.prices,
                                      prune=args.prune)
    except BrainlabError as exc:
        print(f"Error: {visible(exc)}", file=sys.stderr)
        return 1
    print(f"claude {summary.read} read, {summary.unchanged} unchanged, {summary.reset} reset,"
          f" {summary.removed} removed, {summary.errors} errors, {summary.warnings} warnings")
    for refused in summary.refused:  # error rows in the lake too (brainlab errors)
        print(visible(f"{refused.path}: {refused.reason}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
