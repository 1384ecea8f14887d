"""Team scale: the Parquet lake layout, ``export``, ``attach`` and the Spark ingest job.

The single-machine path never imports this package; pyspark is imported lazily, only by
:mod:`brainlab.lake.spark_ingest`, so ``export`` and ``attach`` work without Java.
"""

from brainlab.lake.attach import attach_lake
from brainlab.lake.export import export_store

__all__ = ["attach_lake", "export_store"]
