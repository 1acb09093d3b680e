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
from ..model import ORDERED_TIES, Conventions, Qrels, Run
from . import _bridge
from ._bridge import GradeKey, NativeConventions, Task

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

#: How grades reach the library in the call evalbridge makes ("int": bridged to integers).
BRIDGED_GRADES = "int"

#: Tied scores are re-scored n..1 in the requested order; a library ranks one order, so no ``average``.
TIES = ORDERED_TIES

CAPABILITIES = {
    "P": {"rel": "positive"},
    "R": {"rel": "positive"},
    "RR": {"rel": "positive"},
    "AP": {"rel": "positive", "norm": ("R",), "weights": ("binary",)},
    "nDCG": {"rel": "positive", "gain": ("linear", "exp"), "ideal": ("qrels",), "discount": ("log2",),
             "gains": "nonnegative"},
    "Rprec": {"rel": "positive"},
    "Success": {"rel": "positive"},
    "Judged": {},
    "Bpref": {"rel": "positive"},
    "infAP": {"rel": "positive"},
    "Hits": {"rel": "positive", "cutoff": "none"},
    "F1": {"rel": "positive", "cutoff": "none"},
    "NumRet": {},
    "NumRel": {"rel": "positive"},
    "SetP": {"rel": "positive"},
    "SetR": {"rel": "positive"},
}
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


def compute(qrels: Qrels, run: Run, metrics: Sequence[Metric], conventions: Conventions = Conventions(), *,
            native: bool = False) -> tuple[dict[Metric, dict[str, float]], list[str]]:
    """Per-query values from ir-measures (see :func:`evalbridge.backends.pytrec_eval.compute` for ``native``)."""
    irm = _library()
    from ir_measures import measures as M

    info = _bridge.GradeInfo.of(qrels)
    queries = _bridge.common_queries(qrels, run)
    q_ids, r_ids = (list(qrels), list(run)) if native else (queries, queries)
    groups: dict[tuple[str, GradeKey, int, int | None], list[Task]] = {}
    notes: list[str] = []
    for metric in metrics:
        provider = provider_of(metric)
        rel = metric.get("rel") if "rel" in metric.info.options else None
        task, more = _bridge.plan(NAME, metric, info, grades=BRIDGED_GRADES, native_exp=False, graded_level=False,
                                  rr_cutoff=provider == "msmarco", success_cutoff=False, depth=_bridge.depth(run),
                                  binarise=f"ir-measures has {metric.name} at level 1 only"
                                  if metric.name in LEVEL_ONE_ONLY and rel not in (None, 1) else None)
        notes += more
        groups.setdefault((provider, *task.group), []).append(task)
    values: dict[Metric, dict[str, float]] = {m: {} for m in metrics}
    rescored = 0
    guarded: set[str] = set()
    for (provider, grades, _level, cut), members in groups.items():
        own = PROVIDER_CONVENTIONS[provider]
        measures = {task.metric: NATIVE_MEASURES[task.metric.name](task, M) for task in members}
        qrels_dict = _bridge.prepare_qrels(qrels, grades, q_ids, placeholders=not native, guard_negative=True)
        guarded |= _bridge.guarded(qrels_dict)
        run_dict, count = _bridge.prepare_run(run, r_ids, requested=own.conventions if native else conventions,
                                              native=None if native else own, cut=cut,
                                              placeholders=True)  # see pytrec_eval.EMPTY_RANKING
        rescored = max(rescored, count)
        # One call per measure group; gain variants never share a call (hash-seed bug).
        by_measure: dict[Any, dict[str, float]] = {}
        for row in getattr(irm, provider).iter_calc(list(set(measures.values())), qrels_dict, run_dict):
            by_measure.setdefault(row.measure, {})[row.query_id] = float(row.value)
        for metric, measure in measures.items():
            got = by_measure.get(measure, {})
            values[metric] = {q: got[q] for q in q_ids if q in got}
    providers = sorted({provider_of(m) for m in metrics})
    notes.insert(0, f"ir_measures providers: {', '.join(f'{m}->{provider_of(m)}' for m in metrics)}"
                 if len(providers) > 1 else f"ir_measures provider: {providers[0]}")
    if rescored:
        notes.append(f"scores replaced by rank-derived values n..1 in {rescored} queries with tied scores "
                     f"(order: ties {conventions.ties}, {conventions.score_precision})")
    if not native and any(not qrels[q] for q in queries):
        notes.append("queries with no judgement given one grade-0 placeholder judgement")
    notes += _bridge.empty_rankings(values, run, q_ids) + _bridge.guard_note(guarded)
    return values, _bridge.merge_notes(notes)
