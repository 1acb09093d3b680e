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
from typing import TYPE_CHECKING, Any

from ._version import __version__

#: public name -> module that defines it
_EXPORTS = {
    "evaluate": "evaluation", "as_qrels": "evaluation", "as_run": "evaluation",
    "crosscheck": "cross_check", "CrossCheck": "cross_check",
    "Qrels": "model", "Run": "model", "Settings": "settings",
    "Metric": "metrics.spec", "parse_metric": "metrics.spec", "parse_metrics": "metrics.spec",
    "Results": "results", "Provenance": "results",
    "from_labels": "io.shapes", "from_pairs": "io.shapes", "from_records": "io.shapes", "from_graded": "io.shapes",
    "read_qrels": "io", "read_run": "io", "read_judged_list": "io", "read_pair": "io", "to_qrels": "io",
    "to_run": "io", "write": "io", "formats": "io", "read_log": "io.rag", "read_logs": "io.rag",
    "write_qrels": "io.trec", "write_run": "io.trec", "write_json": "io.jsonl", "write_jsonl": "io.jsonl",
    "to_dataframe": "io.objects", "to_ranx": "io.objects", "to_ir_measures": "io.objects",
    "load_config": "config", "load_configs": "config", "run_config": "pipeline",
    "compare_systems": "stats.compare", "parse_gates": "stats.gates", "check_gates": "stats.gates",
    "agreement": "stats.agreement",
    "ranking_agreement": "stats.ranking_agreement",
    "agree": "stats.agreement",
    "compare": "stats.compare",
    "diagnose": "diagnostics",
    "power": "stats.power",
    "uncertain": "uncertainty",
    "Report": "reports.report",
    "log_mlflow": "tracking",
    "diff": "diffing",
    "pool": "pooling",
    "merge_judgements": "merging",
    "what_changed": "stats.changes",
    "EvalbridgeError": "errors", "InputError": "errors", "MetricSpecError": "errors",
    "UnsupportedMetricError": "errors", "BackendUnavailableError": "errors",
    "EvalbridgeWarning": "errors",
}

if TYPE_CHECKING:  # what type checkers and IDEs see: every public name with its signature ("X as X": re-exported)
    from .evaluation import evaluate as evaluate, as_qrels as as_qrels, as_run as as_run
    from .cross_check import crosscheck as crosscheck, CrossCheck as CrossCheck
    from .model import Qrels as Qrels, Run as Run
    from .settings import Settings as Settings
    from .metrics.spec import Metric as Metric, parse_metric as parse_metric, parse_metrics as parse_metrics
    from .results import Results as Results, Provenance as Provenance
    from .io.shapes import (
        from_labels as from_labels, from_pairs as from_pairs, from_records as from_records,
        from_graded as from_graded,
    )
    from .io import (
        read_qrels as read_qrels, read_run as read_run, read_judged_list as read_judged_list, read_pair as read_pair,
        to_qrels as to_qrels, to_run as to_run, write as write, formats as formats,
    )
    from .io.rag import read_log as read_log, read_logs as read_logs
    from .io.trec import write_qrels as write_qrels, write_run as write_run
    from .io.jsonl import write_json as write_json, write_jsonl as write_jsonl
    from .io.objects import to_dataframe as to_dataframe, to_ranx as to_ranx, to_ir_measures as to_ir_measures
    from .config import load_config as load_config, load_configs as load_configs
    from .pipeline import run_config as run_config
    from .stats.compare import compare_systems as compare_systems, compare as compare
    from .stats.gates import parse_gates as parse_gates, check_gates as check_gates
    from .stats.power import power as power
    from .stats.agreement import agreement as agreement, agree as agree
    from .stats.ranking_agreement import ranking_agreement as ranking_agreement
    from .reports.report import Report as Report
    from .diagnostics import diagnose as diagnose
    from .uncertainty import uncertain as uncertain
    from .tracking import log_mlflow as log_mlflow
    from .diffing import diff as diff
    from .pooling import pool as pool
    from .merging import merge_judgements as merge_judgements
    from .stats.changes import what_changed as what_changed
    from .errors import (
        EvalbridgeError as EvalbridgeError, InputError as InputError, MetricSpecError as MetricSpecError,
        UnsupportedMetricError as UnsupportedMetricError, BackendUnavailableError as BackendUnavailableError,
        EvalbridgeWarning as EvalbridgeWarning,
    )

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'evalbridge' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
