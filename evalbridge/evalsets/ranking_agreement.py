"""Do two sets of judgements rank the systems the same way? Per metric, Kendall's tau and tau_ap between the
orderings of the systems by their mean, and how many significant differences between two systems flip from one
set of judgements to the other (:func:`ranking_agreement`, :class:`RankingAgreement`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..common.json_data import json_ready
from ..metrics.spec import parse_metric
from ..views.table import Shown, number
from ..stats.paired_tests import holm, paired_t_test, randomization_test
from ..common.parameters import check_choice
from ..stats.system_order import kendall_tau as _kendall_tau, tau_ap

if TYPE_CHECKING:
    import pandas as pd

    from ..evaluation.results import Results

__all__ = ["ranking_agreement", "RankingAgreement", "MetricRankingAgreement", "PairOutcome", "TESTS", "USES", "OUTCOMES",
           "check_names", "check_significance"]


def _p_t(a: Sequence[float], b: Sequence[float], n_resamples: int, seed: int) -> float:
    return paired_t_test(a, b)


def _p_randomization(a: Sequence[float], b: Sequence[float], n_resamples: int, seed: int) -> float:
    return randomization_test(a, b, n_resamples=n_resamples, seed=seed)


#: test name -> two-sided p-value of a paired test (a, b, n_resamples, seed)
TESTS: Mapping[str, Callable[[Sequence[float], Sequence[float], int, int], float]] = {
    "t": _p_t, "randomization": _p_randomization,
}
#: the fields of Statistics a ranking agreement honours: its tests (two-sided, Holm over the pairs), level,
#: resamples and seed; no interval
USES: Mapping[str, tuple[Any, ...] | None] = {"test": tuple(TESTS), "correction": ("holm",), "alpha": None,
                                              "n_resamples": None, "seed": None, "sides": (2,)}
#: why a ranking agreement refuses the other fields
WHY = "it tests each pair two-sided, Holm-corrected, and draws no interval"
#: (significant under a, significant under b, signs opposite) -> what happened to the pair
OUTCOMES: Mapping[tuple[bool, bool, bool], str] = {
    (True, True, False): "agree", (True, True, True): "reversed", (True, False, False): "lost",
    (False, True, False): "gained", (False, False, False): "neither",
}


@dataclass(frozen=True)
class PairOutcome:
    """Two systems compared on one metric under each set of judgements.

    ``delta_*`` = mean(system_1) - mean(system_2) over the queries both were evaluated on, system_1 listed after
    system_2 (system - baseline, the earlier system the baseline of the later, as ``compare``'s pairs); ``p_*`` the
    Holm-adjusted p-value (over every pair of that metric under that set of judgements); ``outcome``:
    ``agree`` (significant under both, same sign), ``reversed`` (significant under both, opposite signs),
    ``lost`` (significant under a only), ``gained`` (under b only), ``neither``.
    """

    metric: str
    system_1: str
    system_2: str
    delta_a: float
    p_a: float
    significant_a: bool
    delta_b: float
    p_b: float
    significant_b: bool
    outcome: str


@dataclass(frozen=True)
class MetricRankingAgreement:
    """How the two sets of judgements rank the systems on one metric.

    Attributes:
        metric: the metric as asked; ``metric_a`` / ``metric_b`` as each evaluation resolved it.
        systems: the systems, in the order given; ``means_a`` / ``means_b`` their means.
        kendall_tau, kendall_p: Kendall's tau-b between the means and its p-value (scipy).
        tau_ap: AP correlation with the reference judgements as the truth (a unless the agreement says
            ``truth=1``) and the other as the estimate; ``tau_ap_symmetric`` the mean of both directions (see
            :func:`tau_ap`).
        pairs: one :class:`PairOutcome` per pair of systems.
    """

    metric: str
    metric_a: str
    metric_b: str
    systems: tuple[str, ...]
    means_a: tuple[float, ...]
    means_b: tuple[float, ...]
    kendall_tau: float
    kendall_p: float
    tau_ap: float
    tau_ap_symmetric: float
    pairs: tuple[PairOutcome, ...]

    def count(self, outcome: str) -> int:
        """Pairs with this outcome (see :data:`OUTCOMES`)."""
        check_choice(outcome, OUTCOMES.values(), "outcome")
        return sum(p.outcome == outcome for p in self.pairs)

    @property
    def significant_a(self) -> int:
        return sum(p.significant_a for p in self.pairs)

    @property
    def significant_b(self) -> int:
        return sum(p.significant_b for p in self.pairs)

    @property
    def flipped(self) -> int:
        """Pairs significant under one side that are reversed or not significant under the other."""
        return self.count("reversed") + self.count("lost") + self.count("gained")

    @property
    def flipped_share(self) -> float:
        """flipped / pairs significant under a or b (nan when none is)."""
        either = self.flipped + self.count("agree")
        return self.flipped / either if either else math.nan

    def ranking(self, side: str) -> tuple[str, ...]:
        """The systems by mean under ``"a"`` or ``"b"``, best first (equal means in the order given)."""
        means = {"a": self.means_a, "b": self.means_b}.get(side)
        if means is None:
            raise InputError(f"side must be 'a' or 'b'; got {side!r}.")
        order = sorted(range(len(self.systems)), key=lambda i: -means[i])
        return tuple(self.systems[i] for i in order)

    def summary(self) -> dict[str, Any]:
        """The row of :meth:`RankingAgreement.to_frame`."""
        return {"metric": self.metric, "systems": len(self.systems), "kendall_tau": self.kendall_tau,
                "kendall_p": self.kendall_p, "tau_ap": self.tau_ap, "tau_ap_symmetric": self.tau_ap_symmetric,
                "significant_a": self.significant_a, "significant_b": self.significant_b,
                "agree": self.count("agree"), "reversed": self.count("reversed"), "lost": self.count("lost"),
                "gained": self.count("gained"), "flipped_share": self.flipped_share}


def check_names(names: Sequence[str]) -> tuple[str, str]:
    """The two names of the sets of judgements, or an InputError."""
    pair = tuple(names)
    if len(pair) != 2 or not all(isinstance(n, str) and n for n in pair) or pair[0] == pair[1]:
        raise InputError(f"names must be two different non-empty strings; got {names!r}.",
                         fix='e.g. names=("human", "llm").')
    return pair[0], pair[1]


def check_significance(test: object, alpha: object) -> None:
    check_choice(test, TESTS, "test")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InputError(f"alpha (the significance level) must be a number between 0 and 1; got {alpha!r}.",
                         fix="e.g. alpha=0.05.")


@dataclass(frozen=True)
class RankingAgreement(Shown):
    """Per metric, how the systems rank under judgements a and under judgements b.

    Attributes:
        rows: one :class:`MetricRankingAgreement` per metric, in the order asked (empty when no runs were given).
        names: what the two sets of judgements are called.
        test: ``t`` (paired t-test) or ``randomization`` (Fisher), per pair of systems.
        alpha: significance level of the Holm-adjusted p-values (over the pairs of one metric, per side).
        n_resamples, seed: of the randomization test.
        truth: which judgements tau_ap takes as the truth: 0 (``names[0]``) or 1 (``names[1]``).
    """

    rows: tuple[MetricRankingAgreement, ...]
    names: tuple[str, str] = ("a", "b")
    test: str = "t"
    alpha: float = 0.05
    n_resamples: int = 10_000
    seed: int = 0
    truth: int = 0

    def __post_init__(self) -> None:
        check_significance(self.test, self.alpha)

    def __getitem__(self, metric: str) -> MetricRankingAgreement:
        """The row of one metric, by any spelling."""
        wanted = str(parse_metric(metric))
        for row in self.rows:
            if wanted in (row.metric, row.metric_a, row.metric_b):
                return row
        raise KeyError(f"{metric!r} was not compared; available: {', '.join(r.metric for r in self.rows)}")

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: taus, pairs significant under each side, and what happened to them."""
        import pandas as pd

        frame = pd.DataFrame([row.summary() for row in self.rows],
                             columns=["metric", "systems", "kendall_tau", "kendall_p", "tau_ap", "tau_ap_symmetric",
                                      "significant_a", "significant_b", "agree", "reversed", "lost", "gained",
                                      "flipped_share"])
        return frame.set_index("metric")

    def pairs_frame(self) -> pd.DataFrame:
        """One row per (metric, pair of systems): deltas, adjusted p-values and the outcome."""
        import pandas as pd

        return pd.DataFrame([asdict(p) for row in self.rows for p in row.pairs],
                            columns=list(PairOutcome.__dataclass_fields__))

    def describe(self) -> str:
        """One sentence saying how significance was decided."""
        test = {"t": "paired t-test", "randomization": f"Fisher randomization test ({self.n_resamples} "
                                                       f"resamples, seed {self.seed})"}[self.test]
        return (f"significance: two-sided {test} per pair of systems, Holm-corrected over the pairs of each metric under "
                f"each set of judgements, alpha {self.alpha:g}; tau_ap takes {self.names[self.truth]} as the truth")

    def table(self, fmt: str = "terminal") -> str:
        """One row per metric, then how significance was decided, in an output format that writes tables."""
        from ..views.agreement_tables import render_ranking

        return render_ranking(self, fmt)

    def __repr__(self) -> str:
        taus = ", ".join(f"{r.metric}: tau {number(r.kendall_tau)}, tau_ap {number(r.tau_ap)}, {r.flipped} flipped"
                         for r in self.rows)
        return f"RankingAgreement({self.names[1]} vs {self.names[0]}; {taus or 'no runs'})"

    def to_dict(self) -> dict[str, Any]:
        """``{"settings": {...}, "metrics": [...]}`` with every pair, JSON-ready (nan becomes None)."""
        settings = {"names": list(self.names), "test": self.test, "correction": "holm", "alpha": self.alpha,
                    "n_resamples": self.n_resamples, "seed": self.seed, "tau_ap_truth": self.names[self.truth]}
        return json_ready({"settings": settings,
                       "metrics": [{**asdict(row), **row.summary(), "ranking_a": list(row.ranking("a")),
                                    "ranking_b": list(row.ranking("b"))} for row in self.rows]})


def _pair_p_values(per_query: list[dict[str, float]], pairs: list[tuple[int, int]], test: str, n_resamples: int,
                   seed: int) -> tuple[list[float], list[float]]:
    """Mean difference and raw p-value of each pair, on the queries both systems were evaluated on."""
    deltas, pvalues = [], []
    for i, j in pairs:
        common = [q for q in per_query[i] if q in per_query[j]]
        x, y = [per_query[i][q] for q in common], [per_query[j][q] for q in common]
        deltas.append(math.fsum(x) / len(x) - math.fsum(y) / len(y) if common else math.nan)
        pvalues.append(TESTS[test](x, y, n_resamples, seed) if len(common) >= 2 else math.nan)
    return deltas, pvalues


def _lookup(results: Results, metric: str, system: str, side: str) -> tuple[str, dict[str, float]]:
    if metric not in results:
        raise InputError(f"{metric} was not evaluated for system {system!r} under judgements {side!r} "
                         f"(evaluated: {', '.join(map(str, results.metrics))}).",
                         fix="evaluate every system with the same metrics under both sets of judgements.")
    return str(results.resolve(parse_metric(metric))), results.query(metric)


def ranking_agreement(results_a: Mapping[str, Results], results_b: Mapping[str, Results], *,
                      metrics: Iterable[str] | None = None, names: Sequence[str] = ("a", "b"), test: str = "t",
                      alpha: float = 0.05, n_resamples: int = 10_000, seed: int = 0,
                      truth: int = 0) -> RankingAgreement:
    """Do two sets of judgements rank the same systems the same way?

    For each metric, the systems are ordered by their mean under judgements a and under b, and compared
    with Kendall's tau (:func:`scipy.stats.kendalltau`, tau-b) and tau_ap (:func:`tau_ap`, the judgements
    ``truth`` names as the truth; also its symmetric mean). Then every pair of systems (each system against
    every one listed before it: delta = the later - the earlier) is tested under each side (``test``, Holm over the
    pairs of the metric), and the pairs significant under a or b are sorted into ``agree`` / ``reversed`` /
    ``lost`` / ``gained``; ``flipped_share`` is the share that did not stay significant with the same sign.

    Args:
        results_a, results_b: system name -> :class:`~evalbridge.evaluation.results.Results`, the same systems
            evaluated under judgements a and under judgements b (e.g. with :func:`evalbridge.evaluate`).
        metrics: the metrics to compare (any spelling, as evaluated); default: every metric of the first
            system under a.
        names: what the two sets of judgements are called.
        test: ``t`` (paired t-test) or ``randomization`` (Fisher), see :mod:`evalbridge.decisions.compare`.
        alpha: significance level of the Holm-adjusted p-values.
        n_resamples, seed: of the randomization test.
        truth: 0 (a, the default) or 1 (b): the judgements tau_ap takes as the truth, e.g. the fuller set.

    Raises:
        InputError: the two sides hold different systems, fewer than two systems, a metric not evaluated.

    Example:
        >>> import evalbridge as eb
        >>> qrels = {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}}
        >>> runs = {"x": {"q1": {"d1": 2, "d9": 1}, "q2": {"d3": 1}}, "y": {"q1": {"d9": 2, "d2": 1}, "q2": {"d8": 1}},
        ...         "z": {"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 1}}}
        >>> results = {name: eb.evaluate(qrels, run, "P@1") for name, run in runs.items()}
        >>> row = ranking_agreement(results, results).rows[0]
        >>> round(row.kendall_tau, 12), row.tau_ap, row.flipped
        (1.0, 1.0, 0)
    """
    names = check_names(names)
    check_significance(test, alpha)
    if truth not in (0, 1) or isinstance(truth, bool):
        raise InputError(f"truth must be 0 (the first judgements) or 1 (the second); got {truth!r}.")
    from ..evaluation.results import Results

    for results, side in ((results_a, names[0]), (results_b, names[1])):
        if not isinstance(results, Mapping):
            raise InputError(f"the results under {side!r} must map each system name to its Results; got "
                             f"{type(results).__name__}.", fix="pass {name: eb.evaluate(qrels, run, metrics)}.")
        wrong = next((s for s, r in results.items() if not isinstance(r, Results)), None)
        if wrong is not None:
            raise InputError(f"system {wrong!r} under {side!r} is a {type(results[wrong]).__name__}, not the "
                             f"Results of eb.evaluate.", fix="pass {name: eb.evaluate(qrels, run, metrics)}.")
    systems = list(results_a)
    missing_b, missing_a = [s for s in systems if s not in results_b], [s for s in results_b if s not in results_a]
    if missing_a or missing_b:
        raise InputError(f"the two sides must hold the same systems; only under {names[0]!r}: {missing_b}, only "
                         f"under {names[1]!r}: {missing_a}.", fix="evaluate every run under both sets of judgements.")
    if len(systems) < 2:
        raise InputError(f"ranking systems needs at least two of them; got {len(systems)} ({systems}).",
                         fix="give two runs or more.")
    asked = [str(parse_metric(m)) for m in metrics] if metrics is not None else \
        [str(m) for m in results_a[systems[0]].metrics]
    if not asked:
        raise InputError("no metric to compare.", fix='pass metrics=["nDCG@10", ...].')
    pairs = [(j, i) for j in range(len(systems)) for i in range(j)]   # system - baseline, compare's pairs
    rows = []
    for metric in asked:
        sides = []
        for results, side in ((results_a, names[0]), (results_b, names[1])):
            looked = [_lookup(results[s], metric, s, side) for s in systems]
            per_query = [values for _, values in looked]
            means = [math.fsum(v.values()) / len(v) if v else 0.0 for v in per_query]
            deltas, raw = _pair_p_values(per_query, pairs, test, n_resamples, seed)
            sides.append((looked[0][0], means, deltas, holm(raw)))
        (label_a, means_a, deltas_a, p_a), (label_b, means_b, deltas_b, p_b) = sides
        outcomes = []
        for (i, j), da, pa, db, pb in zip(pairs, deltas_a, p_a, deltas_b, p_b):
            sig_a, sig_b = bool(pa <= alpha), bool(pb <= alpha)  # nan (too few queries) is not significant
            key = (sig_a, sig_b, sig_a and sig_b and (da > 0) != (db > 0))
            outcomes.append(PairOutcome(metric=metric, system_1=systems[i], system_2=systems[j], delta_a=da,
                                        p_a=pa, significant_a=sig_a, delta_b=db, p_b=pb, significant_b=sig_b,
                                        outcome=OUTCOMES[key]))
        tau, tau_p = _kendall_tau(means_a, means_b)
        rows.append(MetricRankingAgreement(
            metric=metric, metric_a=label_a, metric_b=label_b, systems=tuple(systems), means_a=tuple(means_a),
            means_b=tuple(means_b), kendall_tau=tau, kendall_p=tau_p,
            tau_ap=tau_ap(means_a, means_b) if truth == 0 else tau_ap(means_b, means_a),
            tau_ap_symmetric=tau_ap(means_a, means_b, symmetric=True), pairs=tuple(outcomes)))
    return RankingAgreement(rows=tuple(rows), names=names, test=test, alpha=float(alpha), n_resamples=n_resamples,
                            seed=seed, truth=truth)
