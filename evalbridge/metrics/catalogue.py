"""What metrics exist, their options, and every spelling users know them by.

This module is data only. A metric's definition lives in :mod:`evalbridge.metrics.reference`;
its parsing in :mod:`evalbridge.metrics.spec`; which backend computes it in each backend's
capability table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

__all__ = ["MetricInfo", "METRICS", "ALIASES", "CHOICES", "NUMERIC", "TREC_NAMES"]


@dataclass(frozen=True)
class MetricInfo:
    """One metric family.

    Attributes:
        name: canonical name, as in ir-measures (``nDCG``, ``AP``, ``P``...).
        title: a few words for tables.
        formula: the definition over one query, plain text.
        cutoff: ``required``, ``optional`` or ``none`` (the ``@k`` part).
        options: option -> default value; defaults never appear in canonical strings.
        binary: True when relevance is binary at a level ``rel``; a metric that does
            not set ``rel`` uses the evaluation's relevance level (default 1).
    """

    name: str
    title: str
    formula: str
    cutoff: str
    options: Mapping[str, Any] = field(default_factory=dict)
    binary: bool = True


def _info(name: str, title: str, formula: str, cutoff: str, binary: bool = True, **options: Any) -> MetricInfo:
    return MetricInfo(name, title, formula, cutoff, MappingProxyType({"rel": None, **options}), binary)


METRICS: Mapping[str, MetricInfo] = MappingProxyType({m.name: m for m in (
    _info("P", "precision at k", "|relevant in top k| / k", "required"),
    _info("R", "recall at k", "|relevant in top k| / R, R = |relevant judged|; 0 when R = 0", "required"),
    _info("RR", "reciprocal rank", "1 / rank of the first relevant doc (within k); 0 if none", "optional"),
    _info("AP", "average precision",
          "sum over relevant ranks i <= k of P@i * w_i, divided by N; w_i = 1 (weights=binary) or "
          "grade_i / max_grade (weights=graded); N = R, all relevant judged (norm=R) or the relevant "
          "docs in the top k (norm=retrieved); 0 when N = 0", "optional",
          norm="R", weights="binary", max_grade=None),
    _info("nDCG", "normalised DCG",
          "DCG@k / IDCG@k; gain g = grade (linear) or 2^grade - 1 (exp), 0 for grade <= 0 or grade < rel; "
          "discount 1/log2(i+1) (log2) or 1 for i = 1 and 1/log2(i) for i >= 2 (jk, Jarvelin-Kekalainen); "
          "IDCG from the grades of all judged docs (ideal=qrels) or of the retrieved docs (ideal=run); "
          "0 when IDCG = 0", "optional", binary=False, gain="linear", ideal="qrels", discount="log2"),
    _info("DCG", "discounted cumulative gain", "sum over i <= k of gain(grade_i) * discount(i), as nDCG",
          "optional", binary=False, gain="linear", discount="log2"),
    _info("Rprec", "R-precision", "|relevant in top R| / R, R = |relevant judged|; 0 when R = 0", "none"),
    _info("Success", "success / hit rate / coverage",
          "1 if a relevant doc is in the top k, else 0; its mean is the share of queries with a hit",
          "optional"),
)})

#: Values allowed for each choice option; the canonical spelling is the one listed.
CHOICES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "gain": ("linear", "exp"),
    "ideal": ("qrels", "run"),
    "discount": ("log2", "jk"),
    "norm": ("R", "retrieved"),
    "weights": ("binary", "graded"),
})

#: Options whose value is a number.
NUMERIC = frozenset({"rel", "max_grade"})

#: Spellings from ranx, ir-measures, trec_eval and the RAG world, lower-cased:
#: alias -> (canonical name, options the alias implies).
ALIASES: Mapping[str, tuple[str, Mapping[str, Any]]] = MappingProxyType({
    **{a: ("P", {}) for a in ("p", "precision")},
    **{a: ("R", {}) for a in ("r", "recall")},
    **{a: ("RR", {}) for a in ("rr", "mrr", "recip_rank", "reciprocal_rank")},
    **{a: ("AP", {}) for a in ("ap", "map", "average_precision")},
    "wmap": ("AP", {"weights": "graded"}),
    "ndcg": ("nDCG", {}),
    "ndcg_burges": ("nDCG", {"gain": "exp"}),
    "ndcg_jk": ("nDCG", {"discount": "jk"}),
    "dcg": ("DCG", {}),
    "dcg_burges": ("DCG", {"gain": "exp"}),
    **{a: ("Rprec", {}) for a in ("rprec", "r-precision", "r_precision")},
    **{a: ("Success", {}) for a in ("success", "hit_rate", "hitrate", "hits_at_k", "coverage")},
})

#: trec_eval's ``name_k`` measure names -> alias.
TREC_NAMES: Mapping[str, str] = MappingProxyType({
    "p": "p", "recall": "recall", "map_cut": "map", "ndcg_cut": "ndcg", "success": "success",
})

#: ir-measures option spellings -> (our option, value translation).
OPTION_ALIASES: Mapping[str, tuple[str, Mapping[str, str]]] = MappingProxyType({
    "dcg": ("gain", {"log2": "linear", "exp-log2": "exp"}),
})
