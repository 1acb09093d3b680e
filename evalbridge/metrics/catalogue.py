"""What metrics exist, their options, the functions that compute them, and every spelling users know them by.

This module is data, plus the one rule that reads it to find a family's functions (:func:`functions_of`).
A metric's definition lives in :mod:`evalbridge.metrics.reference`; its exact value under tied
scores in :mod:`evalbridge.metrics.tie_aware`; its numpy kernel in :mod:`evalbridge.fast.kernels`
(each a function of the name its entry gives, :attr:`MetricInfo.function`); its parsing in
:mod:`evalbridge.metrics.spec`; which backend computes it in each backend's capability table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

__all__ = ["MetricInfo", "METRICS", "ALIASES", "CHOICES", "NUMERIC", "MAPPINGS", "INPUTS", "TREC_NAMES", "TREC_MEASURES",
           "TREC_UNSUPPORTED", "functions_of"]


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
        choices: allowed values of a choice option where this family differs from
            :data:`CHOICES` (e.g. RBP's ``weights`` adds ``raw``).
        inputs: what the family's kernel reads besides the grades, per retrieved document
            (see :data:`INPUTS`); the backends pass each as a keyword argument.
        inputs_with: option -> inputs the kernel also reads when that option is set (nDCG reads
            ``in_qrels`` only with a gain map); without them it takes every retrieved doc as judged.
        function: the name of the family's function in each module that computes metrics: the
            reference (:mod:`evalbridge.metrics.reference`), the tie-aware formulas
            (:mod:`evalbridge.metrics.tie_aware`) and the fast backend (:mod:`evalbridge.fast.kernels`);
            their ``FUNCTIONS`` and ``KERNELS`` tables are built from it by :func:`functions_of`.
        tie_aware: False for a family without an exact tie-aware formula (yet): refused under
            ``ties="average"``, and :mod:`evalbridge.metrics.tie_aware` defines no function for it.
        bounds: the values a query's value (and so a mean) can take, ``(low, high)``; ``inf`` for a count or a
            sum without a ceiling. Gates are checked against them (a threshold no value can meet or miss).
        unbounded_with: ``option=value`` (or an ``option`` set to anything) under which the family has no
            bounds (RBP's raw grades as weights, a gain map that may give any number).
    """

    name: str
    title: str
    formula: str
    cutoff: str
    options: Mapping[str, Any] = field(default_factory=dict)
    binary: bool = True
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    inputs: tuple[str, ...] = ()
    inputs_with: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    function: str = ""
    tie_aware: bool = True
    bounds: tuple[float, float] = (0.0, 1.0)
    unbounded_with: tuple[str, ...] = ()

    def allowed(self, option: str) -> tuple[str, ...] | None:
        """The values a choice option takes in this family (``None``: not a choice option)."""
        return self.choices.get(option, CHOICES.get(option))


def _info(name: str, function: str, title: str, formula: str, cutoff: str, binary: bool = True, *,
          level: bool = True, choices: Mapping[str, tuple[str, ...]] | None = None, inputs: tuple[str, ...] = (),
          inputs_with: Mapping[str, tuple[str, ...]] | None = None, tie_aware: bool = True,
          bounds: tuple[float, float] = (0.0, 1.0), unbounded_with: tuple[str, ...] = (),
          **options: Any) -> MetricInfo:
    """A family; ``level=False`` for the counts that have no relevance level (``NumRet``, ``Judged``...)."""
    return MetricInfo(name, title, formula, cutoff, MappingProxyType({"rel": None, **options} if level else options),
                      binary and level, MappingProxyType(dict(choices or {})), inputs,
                      MappingProxyType(dict(inputs_with or {})), function, tie_aware, bounds, unbounded_with)


#: a count or a sum: no ceiling
_COUNT = (0.0, math.inf)


#: A gain map may give grade 0 a gain, which an unjudged document must not get.
_GAIN_MAP_INPUTS = {"gains": ("in_qrels",)}


#: Per retrieved document, in rank order, what a kernel may read besides the grades:
#: ``in_qrels`` True when the document has a judgement for the query (any grade, negative
#: included); ``in_pool`` True when it has a judgement for some query of the qrels (BEIR's
#: "annotated corpus"); ``stratum`` the stratum of the query's stratified pool sample it belongs
#: to (``None`` outside it), and with it ``judged_strata``, the stratum of each judged document
#: (parallel to the query's judgements, not to the ranking).
INPUTS = ("in_qrels", "in_pool", "stratum", "judged_strata")

#: What the stratified-sample estimates read (Qrels.strata, ``format="sample_eval"``).
_STRATIFIED = ("stratum", "judged_strata")

_GAINS = ("a custom gain map gains={grade: gain} (floats and negatives allowed, as trec_eval's ndcg.1=3 "
          "and ir-measures' gains=) replaces the gain of the grades it lists; unjudged docs gain 0")

METRICS: Mapping[str, MetricInfo] = MappingProxyType({m.name: m for m in (
    _info("P", "precision", "precision at k", "|relevant in top k| / k", "required"),
    _info("R", "recall", "recall at k", "|relevant in top k| / R, R = |relevant judged|; 0 when R = 0", "required"),
    _info("RR", "reciprocal_rank", "reciprocal rank",
          "1 / rank of the first relevant doc (within k); 0 if none", "optional"),
    _info("AP", "average_precision", "average precision",
          "sum over relevant ranks i <= k of P@i * w_i, divided by N; w_i = 1 (weights=binary) or "
          "grade_i / max_grade (weights=graded); N = R, all relevant judged (norm=R) or the relevant "
          "docs in the top k (norm=retrieved); 0 when N = 0", "optional",
          norm="R", weights="binary", max_grade=None),
    _info("nDCG", "ndcg", "normalised DCG",
          "DCG@k / IDCG@k; gain g = grade (linear) or 2^grade - 1 (exp), 0 for grade <= 0 or grade < rel; "
          f"{_GAINS}; discount 1/log2(i+1) (log2) or 1 for i = 1 and 1/log2(i) for i >= 2 (jk, "
          "Jarvelin-Kekalainen); IDCG from the positive gains of all judged docs (ideal=qrels) or of the "
          "retrieved docs (ideal=run), best first; 0 when IDCG = 0; exp gains are computed divided by "
          "2^(top grade), so any grade works", "optional", binary=False, inputs_with=_GAIN_MAP_INPUTS,
          gain="linear", ideal="qrels", discount="log2", gains=None, unbounded_with=("gains",)),
    _info("DCG", "dcg", "discounted cumulative gain",
          "sum over i <= k of gain(grade_i) * discount(i), as nDCG; an error when the sum exceeds float64",
          "optional", binary=False, inputs_with=_GAIN_MAP_INPUTS, gain="linear", discount="log2", gains=None,
          bounds=_COUNT, unbounded_with=("gains",)),
    _info("Rprec", "r_precision", "R-precision",
          "|relevant in top R| / R, R = |relevant judged|; 0 when R = 0", "none"),
    _info("Success", "success", "success / hit rate / coverage",
          "1 if a relevant doc is in the top k, else 0; its mean is the share of queries with a hit",
          "optional"),
    _info("Judged", "judged_share", "judged share of the top k",
          "|docs in the top k with a judgement (any grade)| / min(k, |retrieved|); 0 when nothing is retrieved "
          "(ir-measures)", "optional", level=False, inputs=("in_qrels",)),
    _info("Hole", "hole", "unannotated share of the top k",
          "|docs in the top k judged for no query of the qrels| / k (BEIR's Hole@k: the pool is every "
          "judged doc of every query)", "required", level=False, inputs=("in_pool",)),
    _info("Bpref", "bpref", "binary preference",
          "(1/R) * sum over judged relevant retrieved r of (1 - min(n_r, R) / min(N, R)), n_r = judged "
          "non-relevant docs ranked above r (the term is 1 when n_r = 0), N = |judged non-relevant|; "
          "unjudged docs and negative grades are skipped (trec_eval); 0 when R = 0", "none",
          inputs=("in_qrels",)),
    _info("infAP", "inferred_ap", "inferred average precision",
          "trec_eval's infAP: (1/R) * sum over judged relevant retrieved docs at 0-based rank j of 1 if j = 0, "
          "else 1/(j+1) + j/(j+1) * ((r + n + u) / j) * ((r + e) / (r + n + 2e)), with r, n, u the judged "
          "relevant, judged non-relevant and negative-grade (pooled, unjudged) docs above it and e = 1e-5; "
          "docs without a judgement are skipped but count in j; 0 when R = 0", "none", inputs=("in_qrels",)),
    _info("xinfAP", "stratified_ap", "extended inferred AP (stratified sample)",
          "sample_eval.pl's xinfAP (Yilmaz, Kanoulas and Aslam 2008): AP estimated from a stratified sample of the "
          "pool with known sampling rates: sum over strata s of (D_s / N_s) * (sum of the estimated precisions at "
          "the sampled relevant docs of s) / R^, the precision at rank k estimated as 1/k + (1/k) * sum over s of "
          "d_s * (r_s + e) / (n_s + 3e) over the pooled (d), sampled (n) and sampled relevant (r) docs above k, "
          "D_s / N_s a stratum's pooled / sampled docs, R^ = sum over s of R_s * D_s / N_s, e = 1e-5; unsampled "
          "pooled docs have a negative grade; 0 when R^ = 0", "none", inputs=_STRATIFIED, tie_aware=False),
    _info("infNDCG", "stratified_ndcg", "inferred nDCG (stratified sample)",
          "sample_eval.pl's infNDCG: DCG estimated as sum over strata s of d_s * G_s / n_s (G_s the discounted "
          "gains grade / log2(rank + 1) of the sampled docs of s retrieved, d_s and n_s its pooled and sampled "
          "docs retrieved), over the ideal DCG of the estimated number of docs of each positive grade (rounded "
          "half up, at most 1000 ranks); linear gains; 0 when the ideal DCG is 0", "none", binary=False,
          inputs=_STRATIFIED, tie_aware=False),
    _info("ERR", "expected_reciprocal_rank", "expected reciprocal rank",
          "sum over i <= k of (1/i) * R_i * prod over j < i of (1 - R_j), R = (2^grade - 1) / 2^max_grade "
          "(Chapelle et al.; 0 for grade <= 0 or grade < rel), or gains[grade] when a gains map (probabilities "
          "in [0, 1]) lists the grade; unjudged docs R = 0", "optional", binary=False, inputs_with=_GAIN_MAP_INPUTS,
          max_grade=None, gains=None),
    _info("RBP", "rank_biased_precision", "rank-biased precision",
          "(1 - p) * sum over i <= k of w_i * p^(i-1); w_i = 1 if grade_i >= rel (weights=binary), "
          "grade_i / max(1, top grade of the query) (weights=graded, trec_eval 10's rbp) or grade_i "
          "(weights=raw, ranx's rbp), 0 below rel", "optional", choices={"weights": ("binary", "graded", "raw")},
          p=0.8, weights="binary", unbounded_with=("weights=raw",)),
    _info("RBP_resid", "rbp_residual", "RBP residual",
          "trec_eval 10's rbp_resid: p^n + (1 - p) * sum over unjudged i <= k of p^(i-1), n = min(k, "
          "|retrieved|), when some retrieved doc is unjudged (no judgement, or a negative grade); else 0",
          "optional", level=False, inputs=("in_qrels",), p=0.8),
    _info("F1", "f1", "F1 at k",
          "2 * P@k * R@k / (P@k + R@k) = 2 * |relevant in top k| / (k + R); without k, k = |retrieved| "
          "(trec_eval set_F, ranx f1); 0 when nothing relevant is retrieved", "optional"),
    _info("R_cap", "capped_recall", "capped recall",
          "|relevant in top k| / min(k, R) (BEIR's R_cap@k); 0 when R = 0", "required"),
    _info("Hits", "hits", "relevant retrieved (a count)",
          "|relevant in top k| (ranx hits; without k, trec_eval num_rel_ret); a count: its mean is the "
          "average per query, trec_eval and ir-measures print the sum", "optional", bounds=_COUNT),
    _info("NumRet", "num_ret", "retrieved (a count)", "|retrieved| (trec_eval num_ret); a count", "none", level=False,
          bounds=_COUNT),
    _info("NumRel", "num_rel", "relevant judged (a count)",
          "R = |relevant judged| (trec_eval num_rel); a count", "none", bounds=_COUNT),
    _info("SetP", "set_precision", "set precision",
          "|relevant retrieved| / |retrieved|; 0 when nothing is retrieved", "none"),
    _info("SetR", "set_recall", "set recall", "|relevant retrieved| / R; 0 when R = 0", "none"),
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
NUMERIC = frozenset({"rel", "max_grade", "p"})

#: Options whose value is a mapping of numbers to numbers, written ``{0:0,1:1,2:3}``.
MAPPINGS = frozenset({"gains"})

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
    **{a: ("Hits", {}) for a in ("hits", "numrelret", "num_rel_ret")},
    **{a: ("NumRet", {}) for a in ("numret", "num_ret")},
    **{a: ("NumRel", {}) for a in ("numrel", "num_rel")},
    **{a: ("SetP", {}) for a in ("setp", "set_p")},
    **{a: ("SetR", {}) for a in ("setr", "set_recall")},
    **{a: ("F1", {}) for a in ("f1", "setf", "set_f")},
    **{a: ("R_cap", {}) for a in ("r_cap", "rcap", "capped_recall")},
    **{a: ("Bpref", {}) for a in ("bpref",)},
    **{a: ("RBP_resid", {}) for a in ("rbpresid",)},
})

#: trec_eval's measure names whose trec_eval meaning differs from the family's defaults, matched exactly
#: (trec_eval's names are case-sensitive; ``RBP`` is ir-measures' binary RBP with p = 0.8): trec_eval 10's
#: ``rbp`` weighs each grade by the query's top grade with p = 0.9 and ignores ``-l``; its ``rbp_resid`` has p = 0.9.
TREC_MEASURES: Mapping[str, tuple[str, Mapping[str, Any]]] = MappingProxyType({
    "rbp": ("RBP", {"p": 0.9, "weights": "graded", "rel": 1}),
    "rbp_resid": ("RBP_resid", {"p": 0.9}),
})

#: trec_eval's ``name_k`` measure names -> alias.
TREC_NAMES: Mapping[str, str] = MappingProxyType({
    "p": "p", "recall": "recall", "map_cut": "map", "ndcg_cut": "ndcg", "success": "success",
    "relative_p": "r_cap",  # |relevant in top k| / min(k, R): precision over the best precision at k
})

#: trec_eval measure names (as trec_eval prints them, exactly) that evalbridge does not compute -> why; a spec
#: that is one of them is refused with ``UnsupportedMetricError`` rather than read as something else.
TREC_UNSUPPORTED: tuple[tuple[str, str], ...] = (
    (r"num_q", "trec_eval's num_q is the number of queries evaluated, not a per-query measure: evalbridge "
               "reports it as Results.provenance.queries_evaluated"),
    (r"runid", "trec_eval's runid is the run's tag, a string, not a measure"),
    (r"relstring(_\d+)?", "trec_eval's relstring is a string of the top grades, not a number"),
    (r"gm_(map|bpref)", "trec_eval's gm_map / gm_bpref are geometric means over queries (each value floored at "
                        "1e-5); evalbridge's means are arithmetic: take the geometric mean of Results.query('AP') "
                        "or Results.query('Bpref')"),
    (r"iprec_at_recall_[0-9.]+|11pt_avg(_[0-9.,]+)?", "interpolated precision at recall levels "
                                                       "(iprec_at_recall, 11pt_avg) is not in evalbridge's catalogue "
                                                       "(trec_eval 10 and 9 also place its cutoffs differently)"),
    (r"Rprec_mult_[0-9.]+", "trec_eval's Rprec_mult_x (precision at x * R) is not in evalbridge's catalogue"),
    (r"set_relative_P", "trec_eval's set_relative_P (relevant retrieved / min(R, retrieved)) is not in "
                        "evalbridge's catalogue"),
    (r"set_map", "trec_eval's set_map (set_P * set_recall) is not in evalbridge's catalogue"),
    (r"utility(_[0-9.,-]+)?", "trec_eval's utility (a linear gain of the retrieved set) is not in evalbridge's "
                              "catalogue"),
    (r"unj_\d+", "trec_eval 10's unj_k (the unjudged share of the top k, 0 for a query missing under -c) is not "
                 "in evalbridge's catalogue; Judged@k is the judged share"),
    (r"num_nonrel_judged_ret", "trec_eval's num_nonrel_judged_ret (judged non-relevant retrieved) is not in "
                               "evalbridge's catalogue"),
    (r"G|binG|Rndcg|ndcg_rel", "trec_eval's G, binG, Rndcg and ndcg_rel (its own nDCG variants) are not in "
                               "evalbridge's catalogue; nDCG is trec_eval's ndcg"),
    (r"Z.+", "trec_eval's Z-prefixed measures are z-scores against a per-topic file (-Z); evalbridge computes "
             "no standardised scores"),
    (r"prefs_\w+", "trec_eval's prefs_* measures read preference judgements (-R prefs, qrels_prefs); evalbridge "
                   "reads graded qrels only"),
    (r"P_avgjg_\d+|Rprec_mult_avgjg_[0-9.]+|map_avgjg", "trec_eval's *_avgjg measures average over judgement "
                                                         "groups (-R qrels_jg); evalbridge reads one judgement per "
                                                         "document"),
)

#: ir-measures option spellings -> (our option, value translation).
OPTION_ALIASES: Mapping[str, tuple[str, Mapping[str, str]]] = MappingProxyType({
    "dcg": ("gain", {"log2": "linear", "exp-log2": "exp"}),
})


def functions_of(namespace: Mapping[str, Any]) -> dict[str, Callable[..., Any]]:
    """Metric family -> its function in one module that computes metrics, found by the one rule: the
    function of the name its catalogue entry gives (:attr:`MetricInfo.function`), defined in that module
    (``namespace`` is the module's ``globals()``). A module without a family's function leaves the family
    out. Each such module builds its table (``FUNCTIONS``; the fast kernels: ``KERNELS``) with it, once:

    >>> functions_of({"__name__": "toy", "precision": len})
    {}
    >>> def precision(retrieved, judged, *, k, rel=1): ...
    >>> list(functions_of({"__name__": precision.__module__, "precision": precision}))
    ['P']
    """
    module = namespace["__name__"]
    found = {name: namespace.get(info.function) for name, info in METRICS.items()}
    return {name: function for name, function in found.items()
            if callable(function) and function.__module__ == module}
