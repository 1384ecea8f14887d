"""brainlab: a research workbench for the brain protocol (see docs/ARCHITECTURE.md)."""

__version__ = "0.1.0"
