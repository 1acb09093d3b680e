"""The ir-measures backend, always through a named provider.

ir-measures routes each measure to the first provider that supports it, and the providers
differ: ``RR`` goes to pytrec_eval (ties by doc id descending, float32 scores) but ``RR@k`` to
the msmarco provider (ties by doc id ascending, float64). This backend names the provider of
every measure (:data:`PROVIDERS`) and records it in the provenance. Gain variants of nDCG are
evaluated in separate calls: asking for ``nDCG@k`` and ``nDCG(gains=...)@k`` together returns
values that depend on ``PYTHONHASHSEED`` (ir-measures 0.4.3). The ranx provider is not used:
under pandas >= 3 it fails (ranx's ``from_df`` asserts an ``object`` dtype, AmenRa/ranx#79).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any, Callable

from ..metrics.spec import Metric
from ..model.data import Qrels, Run
from ..model.settings import ORDERED_TIES, Settings
from . import _bridge
from ._bridge import NativeConventions, Task
from .base import Backend, Capabilities

NAME = "ir_measures"
INSTALL = "pip install ir-measures pytrec-eval-terrier"

#: provider -> its native conventions.
PROVIDER_CONVENTIONS = {
    "pytrec_eval": NativeConventions(
        ties="docid_desc", score_precision="float32", missing_queries="zero", empty_qrels="zero", grades="int",
        notes=("queries missing from the run score 0 (measure default)",)),
    "msmarco": NativeConventions(
        ties="docid_asc", score_precision="float64", missing_queries="zero", empty_qrels="drop", grades="int",
        notes=("sorts by (-score, doc id): ties by doc id ascending",)),
    "judged": NativeConventions(
        ties="docid_asc", score_precision="float64", missing_queries="zero", empty_qrels="zero", grades="int",
        notes=("Judged: sorts by (-score, doc id); an empty ranking raises ZeroDivisionError",)),
}
CONVENTIONS = PROVIDER_CONVENTIONS["pytrec_eval"]
#: provider -> its object in the ir_measures module (the one evalbridge names for each measure).
PROVIDER_OBJECTS: dict[str, Callable[[ModuleType], Any]] = {
    "pytrec_eval": lambda irm: irm.pytrec_eval, "msmarco": lambda irm: irm.msmarco, "judged": lambda irm: irm.judged}

#: How grades reach the library in the call evalbridge makes ("int": bridged to integers).
BRIDGED_GRADES = "int"

#: Tied scores are re-scored n..1 in the requested order; a library ranks one order, so no ``average``.
TIES = ORDERED_TIES

MISSING = {
    "DCG": "ir-measures has no plain DCG measure; use nDCG, or backend='ranx'.",
    "ERR": "ir-measures computes ERR only through gdeval, a Perl script that prints 5 decimals, takes grades up to "
           "4 and numeric query ids: not exact; use backend='reference' (ERR(max_grade=4) matches gdeval to its 5 "
           "decimals).",
    "RBP": "ir-measures computes RBP only through the cwl_eval provider, which evalbridge does not drive; "
           "use backend='ranx' or 'reference'.",
}

#: metric family -> ir_measures measure object (``M`` is the ``ir_measures.measures`` module).
NATIVE_MEASURES: dict[str, Callable[[Task, Any], Any]] = {
    "P": lambda t, M: M.P(rel=t.level) @ t.k,
    "R": lambda t, M: M.R(rel=t.level) @ t.k,
    "RR": lambda t, M: M.RR(rel=t.level) @ t.k if t.k else M.RR(rel=t.level),
    "AP": lambda t, M: M.AP(rel=t.level) @ t.k if t.k else M.AP(rel=t.level),
    "nDCG": lambda t, M: M.nDCG @ t.k if t.k else M.nDCG,
    "Rprec": lambda t, M: M.Rprec(rel=t.level),
    "Success": lambda t, M: M.Success(rel=t.level) @ t.k,
    "Judged": lambda t, M: M.Judged @ t.k if t.k else M.Judged,
    "Bpref": lambda t, M: M.Bpref(rel=t.level),
    "infAP": lambda t, M: M.infAP(rel=t.level),
    "Hits": lambda t, M: M.NumRet(rel=t.level),
    "F1": lambda t, M: M.SetF(rel=t.level),
    "NumRet": lambda t, M: M.NumRet,
    "NumRel": lambda t, M: M.NumRel(rel=t.level),
    "SetP": lambda t, M: M.SetP(rel=t.level),
    "SetR": lambda t, M: M.SetR(rel=t.level),
}

#: (metric family, has a cutoff) -> provider; anything else goes to pytrec_eval.
PROVIDERS = {("RR", True): "msmarco", ("Judged", True): "judged", ("Judged", False): "judged"}

#: Families ir-measures' pytrec_eval provider has at level 1 only (``NumRel(rel=Choices(1))``): other
#: levels are binarised.
LEVEL_ONE_ONLY = frozenset({"NumRel"})


def provider_of(metric: Metric) -> str:
    """The ir-measures provider evalbridge names for ``metric``."""
    return PROVIDERS.get((metric.name, metric.k is not None), "pytrec_eval")


def conventions_for(metric: Metric) -> NativeConventions:
    """Native conventions of the provider that computes ``metric``."""
    return PROVIDER_CONVENTIONS[provider_of(metric)]


def _library() -> ModuleType:
    return _bridge.import_library(NAME, "ir_measures", INSTALL)


def version() -> str:
    return str(_library().__version__)


def _plan(metric: Metric, info: _bridge.GradeInfo, depth: int, native: bool) -> tuple[Task, list[str]]:
    rel = metric.get("rel") if "rel" in metric.info.options else None
    one_only = metric.name in LEVEL_ONE_ONLY and rel not in (None, 1)
    return _bridge.plan(NAME, metric, info, grades=BRIDGED_GRADES, native_exp=False, graded_level=False,
                        rr_cutoff=provider_of(metric) == "msmarco", success_cutoff=False, depth=depth,
                        binarise=f"ir-measures has {metric.name} at level 1 only" if one_only else None)


def _call(irm: ModuleType, group: _bridge.Group, batch: _bridge.Batch) -> dict[Metric, dict[str, float]]:
    """One ``iter_calc`` of the group's provider; gain variants never share a call (hash-seed bug)."""
    from ir_measures import measures as M

    measures = {task.metric: NATIVE_MEASURES[task.metric.name](task, M) for task in group.tasks}
    by_measure: dict[Any, dict[str, float]] = {}
    for row in PROVIDER_OBJECTS[group.extra](irm).iter_calc(list(set(measures.values())), batch.qrels, batch.run):
        by_measure.setdefault(row.measure, {})[row.query_id] = float(row.value)
    return {metric: by_measure.get(measure, {}) for metric, measure in measures.items()}


def _provider_note(metrics: Sequence[Metric]) -> list[str]:
    providers = sorted({provider_of(m) for m in metrics})
    return [f"ir_measures providers: {', '.join(f'{m}->{provider_of(m)}' for m in metrics)}"
            if len(providers) > 1 else f"ir_measures provider: {providers[0]}"]


LIBRARY = _bridge.Library(name=NAME, load=_library, native=conventions_for, plan=_plan, call=_call,
                          group=lambda task, native: provider_of(task.metric), leading_notes=_provider_note)


def compute(qrels: Qrels, run: Run, metrics: Sequence[Metric], conventions: Settings = Settings(), *,
            native: bool = False) -> tuple[dict[Metric, dict[str, float]], list[str]]:
    """Per-query values from ir-measures (see :func:`evalbridge.backends.pytrec_eval.compute` for ``native``)."""
    return _bridge.compute(LIBRARY, qrels, run, metrics, conventions, native=native)


BACKEND = Backend(name=NAME, version=version, library="ir_measures", conventions=CONVENTIONS,
                  capabilities=Capabilities({**_bridge.TREC_EVAL_CAPABILITIES, "Judged": {}}, MISSING), ties=TIES,
                  compute=compute, bridged_grades=BRIDGED_GRADES, conventions_for=conventions_for)
