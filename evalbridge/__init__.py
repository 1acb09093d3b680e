"""evalbridge: one bridge between the retrieval-evaluation inputs people have and the
metrics they want, checked against ranx, ir-measures and pytrec_eval.

Importing the package is cheap and has no side effects: every name below is loaded
on first use, and backend libraries only when a backend is asked for.

>>> import evalbridge as eb
>>> qrels, run = eb.from_labels({"q1": [1, 0, 1], "q2": [0, 1, 1]})
>>> round(eb.evaluate(qrels, run, "P@3")["P@3"], 4)
0.6667
"""

from __future__ import annotations

import importlib

#: what type checkers see (they take any ``TYPE_CHECKING`` as true); not ``typing``'s, so that importing the
#: package imports no module it does not need (the command line is then guarded against Ctrl-C the sooner)
TYPE_CHECKING = False

from ._version import __version__

#: public name -> module that defines it: one name per job. Verbs: evaluate, compare (runs or evaluated Results),
#: crosscheck, agree, diff, diagnose, check_gates, power, topic_set_size, uncertain, pool, merge_judgements,
#: what_changed, ppi, judges, run_config, log_mlflow; fuse makes one run of several. Readers: read_qrels / read_run / read_pair read any source the format
#: registry reads (a path, a DataFrame, a dict, ``irds:``...), read_logs several RAG logs of the same questions;
#: from_* build qrels and a run from one Python shape; write writes any format. Converters to other libraries'
#: objects live in :mod:`evalbridge.io.objects`; the steps behind the verbs in their own modules.
_EXPORTS = {
    "evaluate": "evaluation.evaluating", "compare": "decisions.compare", "crosscheck": "cross_check.checking", "agree": "evalsets.agreement",
    "diff": "decisions.diffing", "diagnose": "evalsets.diagnostics", "check_gates": "decisions.gates", "run_config": "config.pipeline",
    "log_mlflow": "tracking", "power": "decisions.power", "uncertain": "evalsets.uncertainty", "pool": "evalsets.pooling",
    "merge_judgements": "evalsets.merging", "what_changed": "evalsets.changes", "ppi": "evalsets.prediction_powered",
    "topic_set_size": "decisions.topic_set_size", "judges": "evalsets.judges", "fuse": "transforms.fusion",
    "read_qrels": "io", "read_run": "io", "read_pair": "io", "read_logs": "io.rag", "write": "io", "formats": "io",
    "from_labels": "io.shapes", "from_pairs": "io.shapes", "from_records": "io.shapes", "from_graded": "io.shapes",
    "load_config": "config",
    "Qrels": "model.data", "Run": "model.data", "Settings": "model.settings", "Statistics": "stats.statistics", "Metric": "metrics.spec", "Results": "evaluation.results",
    "Report": "reports.report",
    "EvalbridgeError": "errors", "InputError": "errors", "MetricSpecError": "errors",
    "UnsupportedMetricError": "errors", "BackendUnavailableError": "errors", "EvalbridgeWarning": "errors",
}

if TYPE_CHECKING:  # what type checkers and IDEs see: every public name with its signature ("X as X": re-exported)
    from typing import Any
    from .evaluation.evaluating import evaluate as evaluate
    from .decisions.compare import compare as compare
    from .cross_check.checking import crosscheck as crosscheck
    from .evalsets.agreement import agree as agree
    from .decisions.diffing import diff as diff
    from .evalsets.diagnostics import diagnose as diagnose
    from .decisions.gates import check_gates as check_gates
    from .config.pipeline import run_config as run_config
    from .tracking import log_mlflow as log_mlflow
    from .io import (
        read_qrels as read_qrels, read_run as read_run, read_pair as read_pair, write as write, formats as formats,
    )
    from .io.rag import read_logs as read_logs
    from .io.shapes import (
        from_labels as from_labels, from_pairs as from_pairs, from_records as from_records,
        from_graded as from_graded,
    )
    from .config import load_config as load_config
    from .model.data import Qrels as Qrels, Run as Run
    from .model.settings import Settings as Settings
    from .stats.statistics import Statistics as Statistics
    from .metrics.spec import Metric as Metric
    from .evaluation.results import Results as Results
    from .reports.report import Report as Report
    from .evalsets.uncertainty import uncertain as uncertain
    from .evalsets.pooling import pool as pool
    from .evalsets.merging import merge_judgements as merge_judgements
    from .evalsets.changes import what_changed as what_changed
    from .decisions.power import power as power
    from .decisions.topic_set_size import topic_set_size as topic_set_size
    from .evalsets.prediction_powered import ppi as ppi
    from .evalsets.judges import judges as judges
    from .transforms.fusion import fuse as fuse
    from .errors import (
        EvalbridgeError as EvalbridgeError, InputError as InputError, MetricSpecError as MetricSpecError,
        UnsupportedMetricError as UnsupportedMetricError, BackendUnavailableError as BackendUnavailableError,
        EvalbridgeWarning as EvalbridgeWarning,
    )

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:  # (annotations are not evaluated: Any is typing's, imported above for checkers)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'evalbridge' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
