"""brainlab: a research workbench for the brain protocol (see docs/ARCHITECTURE.md)."""

import sys

__version__ = "0.1.0"

# jsonschema (altair's validator, nbformat's, papermill's) imports rfc3987_syntax when it is
# installed (Jupyter's extras bring it) for its "iri" format checker, and that module compiles
# a lark grammar at import: 1.2-1.9 CPU-s in every process that draws a chart or reads a
# notebook (a notebook's kernel, `brainlab report`, `brainlab demo`, papermill's engine, the
# tests' workers). No schema brainlab validates (Vega-Lite, nbformat) uses an "iri" format, so
# a process that imports brainlab first goes without it: the module is marked missing and
# jsonschema skips that one checker. A process that loaded jsonschema first keeps what it has.
# (brainlab/report/__init__.py did this for the report kernel alone: issue 28 items 1, 8.)
if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)
