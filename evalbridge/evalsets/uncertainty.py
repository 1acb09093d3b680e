"""A metric when the judgements are uncertain: several judges' grades of the same pairs, or one judge's probability of relevance.

``eb.uncertain(run, "P@10", judges={"ann": qrels_a, "bob": qrels_b})`` or
``eb.uncertain(run, "P@10", probabilities=qrels_p)`` (grades in [0, 1]: the probability that the document is
relevant) returns an :class:`Uncertainty`, data only:

* **the expected value**: with probabilities, each query's exact expectation of the binary metric when each
  document is relevant with its probability, independently (:func:`expected_values`, a dynamic programme
  over the ranks, below); with judges, each query's mean over the judges;
* **an interval that includes the label uncertainty**: a bootstrap over queries *and* labels: each replicate
  draws the queries with replacement and, for each drawn query, one set of labels (one of the judges, or one
  labelling drawn from the probabilities); the percentile interval of the replicates' means. Beside it, the
  interval of the queries alone (labels fixed at their expectation), so the widening is the labels' share.

The expectation, for a run's ranks 1..k with probabilities p_1..p_k and Y ~ the number of relevant documents
among the other judged documents (a Poisson-binomial, independent of the first k): every supported metric
is ``sum_i rel_i w(i, c_i) / h(R)`` with c_i the relevant documents within rank i and R = c_k + Y (P@k: w = 1/k,
h = 1; R@k: w = 1, h = R; Success: w = [c_i = 1]; RR: w = [c_i = 1] / i; AP: w = c_i / i, h = R; binary
nDCG: w = 1 / log2(i + 1), h = IDCG@k(R)). Tracking, rank by rank, P(c_i = c) and E[sum so far; c_i = c] gives
E[metric] = sum_c sum_y P(Y = y) E[sum; c_k = c] / h(c + y), exactly, in O(k^2 + m^2) per query (m judged
documents outside the first k). The tests check it against the reference metric averaged over every
labelling of small cases.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

from ..errors import InputError
from ..common.json_data import json_ready
from ..model.settings import Settings, settings_of
from ..common.parameters import Interval, check_parameters, rule_table
from ..stats.statistics import Statistics, statistics_for, statistics_of
from ..views.table import Shown

if TYPE_CHECKING:
    import numpy as np
    from typing_extensions import Unpack

    from ..model.data import Qrels
    from ..model.settings import Keywords

__all__ = ["uncertain", "Uncertainty", "Uncertainties", "expected_values", "EXPECTED", "UNCERTAINTY_PARAMETERS"]

UNCERTAINTY_PARAMETERS = rule_table(
    Interval("draws", int, 2, 100_000, closed="both", default=200,
             fix="labellings drawn from the probabilities, e.g. 200."),
    Interval("n_resamples", int, 1, 1_000_000, closed="both", default=10_000, fix="e.g. 10000."),
    Interval("confidence", float, 0, 1, closed="neither", default=0.95, fix="a probability, e.g. 0.95."),
    Interval("seed", int, 0, None, closed="left", default=0, fix="a whole number such as 0 or 42."),
)

Weight = Callable[[Any, Any, int], Any]      # (rank i, relevant so far c (array), k) -> weight of a hit at i
Norm = Callable[[Any, "int | None"], Any]    # (R (array), the cut-off or None) -> normaliser (0: the metric is 0)


def _idcg(total: Any, k: int | None) -> Any:
    """IDCG@k of R relevant documents (binary gains); k None: no cut-off."""
    import numpy as np

    top = int(np.max(total)) if k is None else k
    prefix = np.r_[0.0, np.cumsum(1.0 / np.log2(np.arange(2, top + 2)))]
    return prefix[np.minimum(total, top)]


#: metric family -> (weight of a relevant document at rank i with c relevant within i, normaliser of R)
EXPECTED: Mapping[str, tuple[Weight, Norm]] = {
    "P": (lambda i, c, k: 1.0 / k + 0 * c, lambda r, k: 1.0 + 0 * r),
    "R": (lambda i, c, k: 1.0 + 0 * c, lambda r, k: r * 1.0),
    "Success": (lambda i, c, k: (c == 1) * 1.0, lambda r, k: 1.0 + 0 * r),
    "RR": (lambda i, c, k: (c == 1) / i, lambda r, k: 1.0 + 0 * r),
    "AP": (lambda i, c, k: c / i, lambda r, k: r * 1.0),
    "nDCG": (lambda i, c, k: 1.0 / math.log2(i + 1) + 0 * c, _idcg),
}
#: the options each family must have at their default for the formula above to be its definition
_DEFAULTS: Mapping[str, Mapping[str, Any]] = {"AP": {"norm": "R", "weights": "binary"}, "nDCG": {"discount": "log2", "ideal": "qrels", "gains": None}}


def _poisson_binomial(p: np.ndarray) -> np.ndarray:
    """P(Y = y), y = 0..len(p), of a sum of independent Bernoulli(p_j)."""
    import numpy as np

    dist = np.zeros(len(p) + 1)
    dist[0] = 1.0
    for j, q in enumerate(p.tolist()):
        dist[1:j + 2] = dist[1:j + 2] * (1 - q) + dist[:j + 1] * q
        dist[0] *= 1 - q
    return dist


def _expectation(top: np.ndarray, rest: np.ndarray, k: int, cut: int | None, weight: Weight, norm: Norm) -> float:
    """E[metric] of one query: ``top`` the probabilities at ranks 1.. (at most k), ``rest`` those of the judged
    documents not ranked within k; ``cut``: the metric's cut-off (None: none)."""
    import numpy as np

    n = len(top)
    prob = np.zeros(n + 1)
    acc = np.zeros(n + 1)
    prob[0] = 1.0
    counts = np.arange(n + 1)
    for i, p in enumerate(top.tolist(), start=1):
        w = weight(i, counts[1:i + 1], k)                  # weight of a hit at i bringing c to 1..i
        gained = (acc[:i] + prob[:i] * w) * p
        prob[1:i + 1], acc[1:i + 1] = prob[1:i + 1] * (1 - p) + prob[:i] * p, acc[1:i + 1] * (1 - p) + gained
        prob[0] *= 1 - p
        acc[0] *= 1 - p
    others = _poisson_binomial(rest)
    total = counts[:, None] + np.arange(len(others))[None, :]
    h = np.asarray(norm(total, cut), dtype=np.float64) * np.ones(total.shape)
    ratio = np.divide(acc[:, None], h, out=np.zeros(total.shape), where=h > 0)
    return float((ratio * others[None, :]).sum())


def _check_metric(metric: str) -> tuple[Any, Weight, Norm]:
    from ..metrics.spec import parse_metric

    parsed = parse_metric(metric)
    if parsed.name not in EXPECTED or any(parsed.settings.get(o) != v for o, v in _DEFAULTS.get(parsed.name, {}).items()):
        raise InputError(f"the expected value under probabilities of relevance is computed for "
                         f"{', '.join(EXPECTED)} (binary, default options); got {metric}.",
                         fix="ask one of them, e.g. P@10, nDCG@10, AP or RR; or give several judges instead.")
    rel = parsed.settings.get("rel")
    if rel is not None and not 0 < rel <= 1:
        raise InputError(f"{metric}: a probability of relevance makes every label 0 or 1, so rel must be in (0, 1]; "
                         f"got rel={rel}.", fix=f"write {parsed.name}{'' if parsed.k is None else f'@{parsed.k}'}.")
    return parsed, *EXPECTED[parsed.name]


def _probabilities(qrels: Qrels) -> None:
    bad = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items() if not 0 <= g <= 1]
    if bad:
        q, d, g = bad[0]
        raise InputError(f"probabilities of relevance must lie in [0, 1]; got {g!r} for doc {d!r}.", query_id=q,
                         fix="give grades as judges=..., or scale the scores into probabilities first.")


def expected_values(probabilities: Any, run: Any, metric: str, *, ties: str = "docid_desc") -> dict[str, float]:
    """Each query's exact expected ``metric`` when each judged document is relevant with its probability
    (the qrels' grades, in [0, 1]) independently; unjudged documents are not relevant. Queries of the qrels;
    one the run lacks scores 0.

    >>> expected_values({"q": {"a": 0.5, "b": 0.5}}, {"q": {"a": 2.0, "b": 1.0}}, "P@1")
    {'q': 0.5}
    """
    import numpy as np

    from ..evaluation.evaluating import as_qrels, as_run
    from ..common.ranking import rank

    qrels, ranked_run = as_qrels(probabilities), as_run(run)
    _probabilities(qrels)
    parsed, weight, norm = _check_metric(metric)
    out = {}
    for qid, judged in qrels.items():
        order = rank(ranked_run[qid], ties=ties) if qid in ranked_run else []
        k = parsed.k if parsed.k is not None else max(1, len(order))
        top = order[:k]
        chosen = set(top)
        p_top = np.array([float(judged.get(d, 0.0)) for d in top])
        p_rest = np.array([float(g) for d, g in judged.items() if d not in chosen])
        out[qid] = _expectation(p_top, p_rest, k, parsed.k, weight, norm)
    return out


@dataclass(frozen=True)
class Uncertainty(Shown):
    """A metric's value and interval with the labels' uncertainty (see the module docstring).

    Attributes:
        metric, system: what was measured, of which run.
        source: ``judges`` or ``probabilities``; ``labellings``: the judges' names, or how many labellings were drawn.
        queries: the queries measured.
        expected: the mean over queries of each query's expected value (probabilities: exact; judges: the
            judges' mean).
        ci_low, ci_high: the percentile interval of the bootstrap over queries and labels, at ``confidence``.
        query_ci_low, query_ci_high: the interval of the bootstrap over queries alone (labels at their expectation).
        per_query: each query's expected value.
    """

    metric: str
    system: str
    source: str
    labellings: tuple[str, ...] | int
    queries: int
    expected: float
    ci_low: float
    ci_high: float
    query_ci_low: float
    query_ci_high: float
    confidence: float
    n_resamples: int
    seed: int
    per_query: Mapping[str, float]

    @property
    def widening(self) -> float:
        """How many times wider the interval is with the labels' uncertainty than with the queries' alone."""
        narrow = self.query_ci_high - self.query_ci_low
        return (self.ci_high - self.ci_low) / narrow if narrow > 0 else math.inf

    @property
    def measured(self) -> tuple[Uncertainty, ...]:
        """The measurements, as :class:`Uncertainties` has them: this one."""
        return (self,)

    def to_dict(self) -> dict[str, Any]:
        """Every number and each query's expected value, JSON-ready (nan and infinity as None)."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "per_query"}
        return json_ready({**data, "per_query": dict(self.per_query)})

    def table(self, fmt: str = "terminal") -> str:
        """The measurement as text: ``json`` or any output format that writes tables (:mod:`evalbridge.views.uncertainty`)."""
        from ..views.uncertainty import render_uncertainty

        return render_uncertainty(self, fmt)


@dataclass(frozen=True)
class Uncertainties(Shown):
    """:func:`uncertain` of several metrics: one :class:`Uncertainty` per metric, in the order asked, each the
    measurement of that metric alone (the same numbers, the same seed); its table has a metric column."""

    measured: tuple[Uncertainty, ...]

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(u.metric for u in self.measured)

    def __getitem__(self, metric: str) -> Uncertainty:
        """The measurement of ``metric`` (any spelling)."""
        from ..metrics.spec import by_metric

        return by_metric(self.measured, metric, ("measurement", "measured"))

    def to_dict(self) -> dict[str, Any]:
        """Each metric's :meth:`Uncertainty.to_dict`, in order (``metrics``, ``measured``)."""
        return {"metrics": list(self.metrics), "measured": [u.to_dict() for u in self.measured]}

    def table(self, fmt: str = "terminal") -> str:
        """Every metric's measurement as text, one table (:mod:`evalbridge.views.uncertainty`)."""
        from ..views.uncertainty import render_uncertainty

        return render_uncertainty(self, fmt)


def _several(run: Any, metrics: Sequence[str], *, judges: Mapping[str, Any] | None, probabilities: Any, system: str,
             draws: int, statistics: Statistics, settings: Settings) -> Uncertainties:
    """Each metric measured as :func:`uncertain` measures it alone, the inputs read once."""
    from ..evaluation.evaluating import as_qrels, as_run

    if not metrics:
        raise InputError("uncertain was given no metric.", fix="name one or more, e.g. ['P@10', 'nDCG@10'].")
    the_run = as_run(run, ids=settings.ids, duplicates=settings.duplicates)
    read = None if not isinstance(judges, Mapping) else {n: as_qrels(q, ids=settings.ids) for n, q in judges.items()}
    labels = None if probabilities is None else as_qrels(probabilities, ids=settings.ids)
    found: dict[str, Uncertainty] = {}
    for m in metrics:  # a metric asked again (in any spelling) is kept once, as every verb does
        u = uncertain(the_run, m, judges=read if read is not None else judges, probabilities=labels, system=system,
                      draws=draws, statistics=statistics, settings=settings)
        found.setdefault(u.metric, u)
    return Uncertainties(tuple(found.values()))


def _bootstrap(values: np.ndarray, *, n_resamples: int, confidence: float, seed: int) -> tuple[float, float]:
    """Percentile interval of the mean of ``values[l, q]`` over replicates drawing queries with replacement and
    one labelling l per drawn query (one row: the queries alone)."""
    import numpy as np

    labels, n = values.shape
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    step = max(1, (32 * 2 ** 20) // (16 * max(n, 1)))
    for start in range(0, n_resamples, step):
        b = min(step, n_resamples - start)
        queries = rng.integers(0, n, size=(b, n))
        which = rng.integers(0, labels, size=(b, n)) if labels > 1 else np.zeros((b, n), dtype=np.int64)
        means[start:start + b] = values[which, queries].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


@overload
def uncertain(run: Any, metric: Literal["official"], *, judges: Mapping[str, Any] | None = None, probabilities: Any = None,
              system: str = "run", draws: int = 200, statistics: Statistics | None = None,
              n_resamples: int | None = None, confidence: float | None = None, seed: int | None = None,
              settings: Settings | None = None, **keywords: Unpack[Keywords]) -> Uncertainties: ...


@overload
def uncertain(run: Any, metric: str, *, judges: Mapping[str, Any] | None = None, probabilities: Any = None,
              system: str = "run", draws: int = 200, statistics: Statistics | None = None,
              n_resamples: int | None = None, confidence: float | None = None, seed: int | None = None,
              settings: Settings | None = None, **keywords: Unpack[Keywords]) -> Uncertainty: ...


@overload
def uncertain(run: Any, metric: Sequence[str], *, judges: Mapping[str, Any] | None = None, probabilities: Any = None,
              system: str = "run", draws: int = 200, statistics: Statistics | None = None,
              n_resamples: int | None = None, confidence: float | None = None, seed: int | None = None,
              settings: Settings | None = None, **keywords: Unpack[Keywords]) -> Uncertainties: ...


def uncertain(run: Any, metric: str | Sequence[str], *, judges: Mapping[str, Any] | None = None,
              probabilities: Any = None, system: str = "run", draws: int = 200, statistics: Statistics | None = None,
              n_resamples: int | None = None, confidence: float | None = None, seed: int | None = None,
              settings: Settings | None = None, **keywords: Unpack[Keywords]) -> Uncertainty | Uncertainties:
    """``metric`` of ``run`` with the uncertainty of its labels: give ``judges`` (name -> qrels, the same pairs
    graded by each) or ``probabilities`` (one qrels whose grades are probabilities of relevance), not both.

    Args:
        run: the run (anything ``evaluate`` reads); ``system``: its name in the result.
        metric: one metric; with probabilities, one of :data:`EXPECTED` (binary, at its default options). A list or
            tuple of metrics: each measured as it would be alone (the inputs read once), an :class:`Uncertainties`.
        draws: labellings drawn from the probabilities for the interval.
        statistics: the bootstrap's resamples, confidence and seed (:class:`~evalbridge.Statistics`);
            ``n_resamples``, ``confidence`` and ``seed`` given replace its fields. Its interval is the percentile
            bootstrap over queries and labels and it tests nothing: a ``test``, ``correction``, ``alpha``, ``sides``
            or ``ci_method`` away from its default is refused, not ignored.
        settings, keywords: :func:`evalbridge.evaluate`'s settings (a ``Settings`` whole, or its fields as keywords).
    """
    import numpy as np

    from ..evaluation.evaluating import as_qrels, as_run, evaluate
    from ..model.data import Qrels

    from ..metrics.spec import parse_metric
    from ..io.datasets import with_official

    metric = with_official(metric, *(judges or {}).values(), probabilities)[0]  # "official": the labels' dataset
    if isinstance(metric, (list, tuple)):
        return _several(run, metric, judges=judges, probabilities=probabilities, system=system, draws=draws,
                        statistics=statistics_of(statistics, {name: value for name, value in (
                            ("n_resamples", n_resamples), ("confidence", confidence), ("seed", seed))
                            if value is not None}), settings=settings_of(settings, keywords))
    if not isinstance(metric, str):
        raise InputError(f"uncertain takes one metric (a spec such as 'P@10'); got {type(metric).__name__} "
                         f"{metric!r:.60}.", fix="measure one metric at a time.")
    metric = str(parse_metric(metric))  # one spelling whichever door: p@10 -> P@10
    resampling = statistics_for("uncertain", statistics, {"n_resamples": n_resamples, "confidence": confidence,
                                                          "seed": seed},
                                uses={"n_resamples": None, "confidence": None, "seed": None},
                                why="its interval is the percentile bootstrap over queries and labels; it tests nothing")
    chosen = check_parameters(UNCERTAINTY_PARAMETERS, {"draws": draws,
                                                       **resampling.keywords("n_resamples", "confidence", "seed")})
    if (judges is None) == (probabilities is None):
        raise InputError("give either judges (name -> qrels: several judges' grades) or probabilities (one qrels of "
                         "probabilities of relevance), not both and not neither.",
                         fix="e.g. eb.uncertain(run, 'P@10', judges={'ann': qrels_a, 'bob': qrels_b}).")
    options = settings_of(settings, keywords)
    the_run = as_run(run, ids=options.ids, duplicates=options.duplicates)
    if judges is not None:
        if not isinstance(judges, Mapping) or len(judges) < 2:
            raise InputError("judges must map at least two judge names to their judgements.",
                             fix="e.g. judges={'ann': qrels_a, 'bob': qrels_b}.")
        per_judge = [evaluate(as_qrels(q, ids=options.ids), the_run, metric, settings=options).query(metric)
                     for q in judges.values()]
        ids = [q for q in per_judge[0] if all(q in m for m in per_judge[1:])]
        values = np.array([[m[q] for q in ids] for m in per_judge])
        expected = values.mean(axis=0)
        source, labellings = "judges", tuple(map(str, judges))
    else:
        qrels = as_qrels(probabilities, ids=options.ids)
        exact = expected_values(qrels, the_run, metric, ties=options.ties)
        ids = list(exact)
        expected = np.array([exact[q] for q in ids])
        rng = np.random.default_rng(chosen["seed"])
        labelled = options.replace(min_relevance=1)   # a drawn label is 1 (relevant) or 0
        pairs = [(q, d, float(p)) for q in ids for d, p in qrels[q].items()]
        p = np.array([x[2] for x in pairs])
        drawn = []
        for _ in range(chosen["draws"]):
            labels = (rng.random(len(p)) < p).astype(np.int64).tolist()
            sample: dict[str, dict[str, int]] = {q: {} for q in ids}
            for (q, d, _), label in zip(pairs, labels):
                sample[q][d] = label
            result = evaluate(Qrels(sample, allow_empty=True), the_run, metric, settings=labelled)
            per_query = result.query(metric)
            drawn.append([per_query.get(q, 0.0) for q in ids])
        values = np.array(drawn)
        source, labellings = "probabilities", chosen["draws"]
    if not ids:
        raise InputError("no query to measure: the judgements hold no query in common.")
    low, high = _bootstrap(values, n_resamples=chosen["n_resamples"], confidence=chosen["confidence"],
                           seed=chosen["seed"])
    q_low, q_high = _bootstrap(expected[None, :], n_resamples=chosen["n_resamples"],
                               confidence=chosen["confidence"], seed=chosen["seed"])
    return Uncertainty(metric=metric, system=system, source=source, labellings=labellings, queries=len(ids),
                       expected=float(expected.mean()), ci_low=low, ci_high=high, query_ci_low=q_low,
                       query_ci_high=q_high, confidence=chosen["confidence"], n_resamples=chosen["n_resamples"],
                       seed=chosen["seed"], per_query=dict(zip(ids, expected.tolist())))
