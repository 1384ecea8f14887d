"""Altair chart builders and ipywidgets controls (DataFrames in, charts out; no metric computed here)."""
