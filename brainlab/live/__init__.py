"""Claude Code hooks and the status line: small, fast, never blocking a session (issue 25).

``statusline`` and ``hook ...`` start without click, rich or DuckDB (:mod:`brainlab.live.fast`,
dispatched from :func:`brainlab.cli.run`); they keep their files in a per-user folder
(:mod:`brainlab.live.cache`). ``hooks install`` edits Claude Code's settings
(:mod:`brainlab.live.settings`); the next ingest takes the spool and the limit snapshots
(:mod:`brainlab.live.spool`).
"""
