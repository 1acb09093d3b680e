"""The pytrec_eval backend (pytrec-eval-terrier, trec_eval 9 inside).

Native behaviour (:data:`CONVENTIONS`): scores are stored as C floats (scores 1e-9 apart tie),
ties are broken by doc id descending, queries missing from the run and queries with no
judgement are dropped, grades must be ``int`` (floats and numpy scalars raise), and the
relevance level (an integer >= 1) is ignored by nDCG. Malformed parameterised measure names
can abort the whole Python process inside the C extension, so every name is built here from
a table and validated before the library sees it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import ModuleType
from typing import Callable

from ..errors import UnsupportedMetricError
from ..metrics.spec import Metric
from ..model.data import Qrels, Run
from ..model.settings import ORDERED_TIES, Settings
from . import _bridge
from ._bridge import NativeConventions, Task
from .base import Backend, Capabilities

NAME = "pytrec_eval"
INSTALL = "pip install pytrec-eval-terrier"

CONVENTIONS = NativeConventions(
    ties="docid_desc", score_precision="float32", missing_queries="drop", empty_qrels="drop", grades="int",
    level_scope="binary",
    notes=("trec_eval 9: scores stored as C float", "relevance_level must be an int >= 1; nDCG ignores it",
           "numpy scalars rejected", "no RR cutoff, no plain DCG"))

#: How grades reach the library in the call evalbridge makes ("int": bridged to integers).
BRIDGED_GRADES = "int"

#: Tied scores are re-scored n..1 in the requested order; a library ranks one order, so no ``average``.
TIES = ORDERED_TIES

#: Why an empty ranking gets the placeholder document even in a native call: pytrec_eval-terrier 0.5.11
#: crashes the whole process (segmentation fault) on an empty ranking when bpref is asked with num_ret,
#: num_rel_ret, num_rel or Rprec (``{"q": {"d": 0}}``, run ``{"q": {}}``). On its own it scores an empty
#: ranking 0 everywhere but num_rel, and so does the placeholder (NumRet set back to 0).
EMPTY_RANKING = "pytrec_eval crashes on some empty rankings"

MISSING = {
    "DCG": "trec_eval 9 (inside pytrec_eval) has no plain DCG; use nDCG, or backend='ranx'.",
    "Judged": "trec_eval 9 (inside pytrec_eval) has no judged share (trec_eval 10's unj_k is not in it); "
              "use backend='ir_measures' or 'reference'.",
    "RBP": "trec_eval 9 (inside pytrec_eval) has no RBP (trec_eval 10 added rbp); use backend='ranx' or 'reference'.",
    "RBP_resid": "trec_eval 9 (inside pytrec_eval) has no RBP residual (trec_eval 10 added rbp_resid).",
}

#: metric family -> trec_eval measure (``name.k`` when parameterised).
NATIVE_NAMES: dict[str, Callable[[Task], str]] = {
    "P": lambda t: f"P.{t.k}",
    "R": lambda t: f"recall.{t.k}",
    "RR": lambda t: "recip_rank",
    "AP": lambda t: f"map_cut.{t.k}" if t.k else "map",
    "nDCG": lambda t: f"ndcg_cut.{t.k}" if t.k else "ndcg",
    "Rprec": lambda t: "Rprec",
    "Success": lambda t: f"success.{t.k}",
    "Bpref": lambda t: "bpref",
    "infAP": lambda t: "infAP",
    "Hits": lambda t: "num_rel_ret",
    "F1": lambda t: "set_F",
    "NumRet": lambda t: "num_ret",
    "NumRel": lambda t: "num_rel",
    "SetP": lambda t: "set_P",
    "SetR": lambda t: "set_recall",
}
_MEASURE = re.compile(r"(?P<base>[A-Za-z_]+)(?:\.(?P<k>[1-9][0-9]{0,8}))?")


def _library() -> ModuleType:
    return _bridge.import_library(NAME, "pytrec_eval", INSTALL)


def version() -> str:
    return _bridge.library_version("pytrec-eval-terrier", "pytrec_eval")


def measure_name(task: Task, supported: Sequence[str] | None = None) -> str:
    """The trec_eval measure for ``task``, validated: ``P.5``, ``ndcg_cut.10``, ``recip_rank``.

    >>> from evalbridge.metrics.spec import parse_metric
    >>> measure_name(Task(parse_metric("ndcg@10"), k=10))
    'ndcg_cut.10'
    """
    name = NATIVE_NAMES[task.metric.name](task)
    match = _MEASURE.fullmatch(name)
    if match is None or (supported is not None and match["base"] not in supported):
        raise UnsupportedMetricError(f"{task.metric}: refusing to pass malformed trec_eval measure {name!r} to "
                                     f"pytrec_eval (it can abort the process).")
    return name


def result_key(name: str) -> str:
    """pytrec_eval reports ``P.5`` as ``P_5``."""
    return name.replace(".", "_")


def _plan(metric: Metric, info: _bridge.GradeInfo, depth: int, native: bool) -> tuple[Task, list[str]]:
    return _bridge.plan(NAME, metric, info, grades=BRIDGED_GRADES, native_exp=False, graded_level=False,
                        rr_cutoff=False, success_cutoff=False, depth=depth)


def _call(pte: ModuleType, group: _bridge.Group, batch: _bridge.Batch) -> dict[Metric, dict[str, float]]:
    """One ``RelevanceEvaluator`` for the group's measures, at its level."""
    names = {task.metric: measure_name(task, pte.supported_measures) for task in group.tasks}
    evaluator = pte.RelevanceEvaluator(batch.qrels, sorted(set(names.values())), relevance_level=int(group.level) or 1)
    result = evaluator.evaluate(batch.run)
    return {metric: {q: float(per[result_key(name)]) for q, per in result.items()} for metric, name in names.items()}


LIBRARY = _bridge.Library(
    name=NAME, load=_library, native=lambda metric: CONVENTIONS, plan=_plan, call=_call,
    empty_note="queries with no judgement given one grade-0 placeholder judgement (pytrec_eval drops them)")


def compute(qrels: Qrels, run: Run, metrics: Sequence[Metric], conventions: Settings = Settings(), *,
            native: bool = False) -> tuple[dict[Metric, dict[str, float]], list[str]]:
    """Per-query values from pytrec_eval.

    Args:
        native: False (what :func:`evalbridge.evaluate` uses): bridge ties, float32
            collisions and empty queries so the values follow ``conventions`` exactly, for
            every query in both the qrels and the run. True: pytrec_eval's own behaviour
            (ties by doc id at float32, queries without judgements or results dropped); only
            the grade bridges it cannot run without are applied, and an empty ranking gets
            the placeholder document (see :data:`EMPTY_RANKING`).
    """
    return _bridge.compute(LIBRARY, qrels, run, metrics, conventions, native=native)


BACKEND = Backend(name=NAME, version=version, library="pytrec_eval", conventions=CONVENTIONS,
                  capabilities=Capabilities(_bridge.TREC_EVAL_CAPABILITIES, MISSING), ties=TIES, compute=compute,
                  bridged_grades=BRIDGED_GRADES)
