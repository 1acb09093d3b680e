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
from typing import Any

from ._version import __version__

#: public name -> module that defines it
_EXPORTS = {
    "evaluate": "evaluation", "as_qrels": "evaluation", "as_run": "evaluation",
    "crosscheck": "cross_check", "CrossCheck": "cross_check",
    "Qrels": "model", "Run": "model", "Conventions": "model",
    "Metric": "metrics.spec", "parse_metric": "metrics.spec", "parse_metrics": "metrics.spec",
    "Results": "results", "Provenance": "results",
    "from_labels": "adapters", "from_pairs": "adapters", "from_records": "adapters", "from_graded": "adapters",
    "read_qrels": "trec", "read_run": "trec", "read_judged_list": "trec", "write_qrels": "trec",
    "write_run": "trec",
    "to_qrels": "interop", "to_run": "interop", "to_dataframe": "interop", "to_ranx": "interop",
    "to_ir_measures": "interop", "write_json": "interop", "write_jsonl": "interop",
    "load_config": "config", "load_configs": "config", "run_config": "config",
    "compare_systems": "stats.compare", "parse_gates": "stats.gates", "check_gates": "stats.gates",
    "compare": "stats.compare",
    "Report": "reports.report",
    "EvalbridgeError": "errors", "InputError": "errors", "MetricSpecError": "errors",
    "UnsupportedMetricError": "errors", "BackendUnavailableError": "errors",
}

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
