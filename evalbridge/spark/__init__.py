"""``evalbridge.spark``: evaluate Spark DataFrames of qrels and runs on a Spark cluster (the engine is
:mod:`evalbridge.evaluation.spark`, what runs in a worker :mod:`evalbridge.evaluation.spark_buckets`).

>>> import evalbridge.spark
>>> callable(evalbridge.spark.evaluate)
True
"""

from ..evaluation.spark import (DEFAULT_MASTER, INSTALL_HINT, MIN_PYSPARK, SparkEvaluation, SparkProvenance, evaluate,
                                session)

__all__ = ["evaluate", "SparkEvaluation", "SparkProvenance", "MIN_PYSPARK", "INSTALL_HINT", "session",
           "DEFAULT_MASTER"]
