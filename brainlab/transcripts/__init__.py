"""Claude Code transcripts into the store (SPEC §7): discovery, plan, decode, rows, write.

One line from disk to table: :mod:`discovery` says which files, :mod:`plan` and
:mod:`ingest` what to read of each, :mod:`scan` splits a file's new bytes into lines and
hands each to the typed decoder (:mod:`fast`), or to the tolerant one (:mod:`tolerant`) when
it does not fit; :mod:`marks` and :mod:`broker` read what a line says beyond usage;
:mod:`rows` types the rows, :mod:`pool` runs workers, :mod:`writer` commits whole files.
"""
