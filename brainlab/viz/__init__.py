"""Charts with one theme (altair): DataFrames in, charts out; no metric is computed here."""
