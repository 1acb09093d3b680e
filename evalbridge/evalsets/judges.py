"""The judges' report card: several judges (LLM label sets) each held against the humans' labels, side by side.

Per judge, over the pairs both labelled: Cohen's kappa (plain, linear and quadratic weights), the confusion table,
each grade's precision and recall (the humans' grade as the truth), the mean grade shift (judge - human: > 0 when
the judge grades higher), the grades outside the humans' scale (named with their count and a pair, never dropped:
they are their own rows of the confusion table) and a calibration curve (per judge grade, or per bin of a judge's
non-integer scores: the humans' mean grade and share relevant). With runs, what matters for a decision: each
system's mean under the judge beside the humans', the system order's Kendall's tau and tau_AP against the humans',
and the pairs of systems whose significance flips (:mod:`evalbridge.evalsets.ranking_agreement`). The judges are
ranked by that: tau_AP on the first metric, then fewer flips, then quadratic kappa (without runs: by quadratic
kappa). :func:`judges` is the verb; :mod:`evalbridge.views.judges` declares its tables.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..common.json_data import json_ready
from ..errors import InputError
from ..stats.kappa import cohen_kappa
from ..views.table import Shown, number
from .agreement import DEFAULT_METRICS, JudgeAgreement, agreement, check_thresholds
from ..common.parameters import Interval, OneOf, rule_table
from ..stats.statistics import Statistics, statistics_for
from .ranking_agreement import TESTS, USES, WHY, MetricRankingAgreement, ranking_agreement

if TYPE_CHECKING:
    import pandas as pd

    from .uncertainty import Uncertainty

    from typing_extensions import Unpack

    from ..model.settings import Keywords, Settings

__all__ = ["judges", "JudgeCard", "JudgeNoise", "JudgeReport", "CALIBRATION_BINS", "JUDGES_PARAMETERS", "check_bins"]

#: bins of a calibration curve over a judge's non-integer scores (equal counts of pairs)
CALIBRATION_BINS = 10

#: the verb's own parameters, each default and constraint declared once (the config's ``judges:`` keys too)
JUDGES_PARAMETERS = rule_table(
    Interval("calibration_bins", int, 1, None, default=CALIBRATION_BINS, fix="a whole number >= 1, e.g. 10."),
    OneOf("test", tuple(TESTS), default="t"),
    Interval("alpha", float, 0, 1, closed="neither", default=0.05,
             fix="the significance level is a probability, e.g. 0.05 or 0.01."),
)


@dataclass(frozen=True)
class JudgeNoise:
    """The label noise of a judge run several times (the same prompt re-run: several label sets of one judge).

    Attributes:
        labellings: how many label sets (the judge's labels and its re-runs).
        pairs: the pairs every label set grades.
        disagreement: the share of those pairs whose grades are not all equal.
        kappa: Cohen's kappa between two label sets, averaged over every two of them.
        intervals: per system and metric, :func:`evalbridge.uncertain` over the label sets (a bootstrap over
            queries and label sets): the mean, its interval with the label noise and of the queries alone.
    """

    labellings: int
    pairs: int
    disagreement: float
    kappa: float
    intervals: tuple[Uncertainty, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return json_ready({"labellings": self.labellings, "pairs": self.pairs, "disagreement": self.disagreement,
                           "kappa": self.kappa,
                           "intervals": [{k: v for k, v in u.to_dict().items() if k != "per_query"}
                                         | {"widening": u.widening} for u in self.intervals]})


@dataclass(frozen=True)
class JudgeCard:
    """One judge against the humans.

    Attributes:
        judge: its name.
        agreement: the :class:`~evalbridge.evalsets.agreement.JudgeAgreement` (humans as ``a``, the judge as ``b``):
            the confusion table (rows: human grades, columns: the judge's), plain and quadratic kappa.
        linear_kappa: Cohen's kappa with linear weights over the same table.
        precision, recall: per category of the table (the humans' grade as the truth): of the pairs the judge put
            there, the share the humans put there too; of the humans', the share the judge found (nan: none).
        shift: the mean grade shift, judge - human, over the shared pairs.
        out_of_scale: judge grade outside the humans' scale -> how many pairs have it.
        out_of_scale_example: one such pair ``(query, doc, grade)``, or None.
        calibration: rows ``(judge value or bin, pairs, mean judge grade, mean human grade, share human-relevant)``.
        orders: per metric, the ranking agreement of the systems under the judge vs the humans (empty: no runs).
    """

    judge: str
    agreement: JudgeAgreement
    linear_kappa: float
    precision: tuple[float, ...]
    recall: tuple[float, ...]
    shift: float
    out_of_scale: Mapping[float, int]
    out_of_scale_example: tuple[str, str, float] | None
    calibration: tuple[tuple[str, int, float, float, float], ...]
    orders: tuple[MetricRankingAgreement, ...] = ()
    noise: JudgeNoise | None = None

    @property
    def kappa(self) -> float:
        return self.agreement.cohen_kappa

    @property
    def quadratic_kappa(self) -> float:
        return self.agreement.weighted_kappa

    def summary(self) -> dict[str, Any]:
        """The judge's row of :meth:`JudgeReport.to_frame`."""
        first = self.orders[0] if self.orders else None
        return {"judge": self.judge, "pairs": self.agreement.shared_pairs, "kappa": self.kappa,
                "linear_kappa": self.linear_kappa, "quadratic_kappa": self.quadratic_kappa, "shift": self.shift,
                "out_of_scale": sum(self.out_of_scale.values()),
                "metric": first.metric if first else None,
                "kendall_tau": first.kendall_tau if first else math.nan,
                "tau_ap": first.tau_ap if first else math.nan,
                "flipped": first.flipped if first else 0,
                "rerun_disagreement": self.noise.disagreement if self.noise else math.nan,
                "rerun_kappa": self.noise.kappa if self.noise else math.nan}

    def to_dict(self) -> dict[str, Any]:
        a = self.agreement
        return json_ready({
            **self.summary(), "categories": list(a.categories), "confusion": [list(row) for row in a.confusion],
            "precision": list(self.precision), "recall": list(self.recall),
            "out_of_scale_grades": {str(g): n for g, n in self.out_of_scale.items()},
            "out_of_scale_example": list(self.out_of_scale_example) if self.out_of_scale_example else None,
            "calibration": [dict(zip(("value", "pairs", "judge_mean", "human_mean", "human_relevant"), row))
                            for row in self.calibration],
            "orders": [order.summary() | {"systems": list(order.systems), "means_human": list(order.means_a),
                                          "means_judge": list(order.means_b)} for order in self.orders],
            "noise": self.noise.to_dict() if self.noise else None})


@dataclass(frozen=True)
class JudgeReport(Shown):
    """What :func:`judges` returns: one :class:`JudgeCard` per judge, best first (see the module docstring).

    Attributes:
        cards: the judges' cards, ranked.
        human: what the humans' labels are called.
        scale: the humans' grades (the scale a judge's grades are checked against).
        level: the relevance level of the humans' labels (the calibration's "relevant").
        ranked_by: how the cards are ranked, in words.
        metrics: the metrics the systems are ranked by (empty: no runs).
        test, alpha: the paired test and level of the significance flips.
    """

    cards: tuple[JudgeCard, ...]
    human: str
    scale: tuple[float, ...]
    level: float
    ranked_by: str
    metrics: tuple[str, ...] = ()
    test: str = "t"
    alpha: float = 0.05

    def __getitem__(self, judge: str) -> JudgeCard:
        for card in self.cards:
            if card.judge == judge:
                return card
        raise KeyError(f"no judge {judge!r}; the judges are {', '.join(c.judge for c in self.cards)}")

    def to_frame(self) -> pd.DataFrame:
        """One row per judge, best first: kappas, shift, out-of-scale pairs, tau, tau_AP, flips."""
        import pandas as pd

        return pd.DataFrame([card.summary() for card in self.cards]).set_index("judge")

    def to_dict(self) -> dict[str, Any]:
        return json_ready({"human": self.human, "scale": list(self.scale), "level": self.level,
                           "ranked_by": self.ranked_by, "metrics": list(self.metrics), "test": self.test,
                           "alpha": self.alpha, "judges": [card.to_dict() for card in self.cards]})

    def table(self, fmt: str = "terminal") -> str:
        from ..views.judges import render_judges

        return render_judges(self, fmt)

    def __repr__(self) -> str:
        best = self.cards[0]
        return (f"JudgeReport({len(self.cards)} judges against {self.human}; best {best.judge}: kappa "
                f"{number(best.kappa)}, tau_AP {number(best.summary()['tau_ap'])})")


def _calibration(human: Sequence[float], judge: Sequence[float], level: float, integral: bool,
                 bins: int) -> tuple[tuple[str, int, float, float, float], ...]:
    """Per judge grade (integer grades) or per bin of equal counts (scores), the humans' mean grade and share
    relevant beside the judge's mean."""
    import numpy as np

    h, j = np.asarray(human, dtype="float64"), np.asarray(judge, dtype="float64")
    if integral:
        groups = [(f"{value:g}", j == value) for value in np.unique(j)]
    else:
        order = np.argsort(j, kind="stable")
        groups = []
        for part in np.array_split(order, min(bins, len(order))):
            mask = np.zeros(len(j), dtype=bool)
            mask[part] = True
            groups.append((f"[{j[part].min():.4g}, {j[part].max():.4g}]", mask))
    return tuple((label, int(mask.sum()), float(j[mask].mean()), float(h[mask].mean()),
                  float((h[mask] >= level).mean())) for label, mask in groups if mask.any())


def _card(name: str, human: Any, judge: Any, scale: frozenset[float], level: float, human_name: str,
          bins: Sequence[float] | None, calibration_bins: int) -> JudgeCard:
    import numpy as np

    if not judge.is_integral and bins is None:
        raise InputError(f"the judge {name!r} gives non-integer grades (scores or probabilities), which have no "
                         f"categories to hold against the humans' grades.",
                         fix=f"give it thresholds onto the humans' scale, bins={{{name!r}: [0.25, 0.5, 0.75]}} "
                             f"(a grade g is the number of thresholds <= g).")
    card = agreement(human, judge, names=(human_name, name), bins_b=bins, min_relevance=level)
    table = np.asarray(card.confusion, dtype="float64")
    diagonal = np.diag(table)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(table.sum(axis=0) > 0, diagonal / table.sum(axis=0), math.nan)
        recall = np.where(table.sum(axis=1) > 0, diagonal / table.sum(axis=1), math.nan)
    pairs = [(qid, doc, grade, float(human[qid][doc])) for qid in judge for doc, grade in judge[qid].items()
             if qid in human and doc in human[qid]]
    outside: dict[float, int] = {}
    example = None
    for qid, doc, grade, _ in pairs:
        if grade not in scale:
            outside[grade] = outside.get(grade, 0) + 1
            example = example or (qid, doc, grade)
    raw_h = [h for *_, h in pairs]
    raw_j = [float(g) for _, _, g, _ in pairs]
    return JudgeCard(
        judge=name, agreement=card, linear_kappa=cohen_kappa(table, weights="linear"),
        precision=tuple(float(p) for p in precision), recall=tuple(float(r) for r in recall),
        shift=float(np.mean(np.asarray(raw_j) - np.asarray(raw_h))) if bins is None else card.mean_difference,
        out_of_scale=dict(sorted(outside.items())), out_of_scale_example=example,
        calibration=_calibration(raw_h, raw_j, level, judge.is_integral, calibration_bins))


def check_bins(bins: Mapping[str, Sequence[float]] | None, judges: Iterable[str]) -> dict[str, tuple[float, ...]]:
    """``bins`` (judge name -> thresholds onto the humans' scale) checked: each name a judge's, each list strictly
    increasing finite numbers.

    Raises:
        InputError: bins that are no mapping, a name that is no judge's, bad thresholds; the message names the
            judge and the fix.
    """
    names = [str(name) for name in judges]
    if bins is None:
        return {}
    if not isinstance(bins, Mapping):
        raise InputError(f"bins maps a judge's name to its thresholds; got {bins!r:.80}.",
                         fix=f"e.g. bins={{{names[0]!r}: [0.25, 0.5, 0.75]}} (a grade g is the number of thresholds "
                             f"<= g).")
    found = {}
    for name, edges in bins.items():
        if str(name) not in names:
            raise InputError(f"bins names {name!r}, which is no judge; the judges are {', '.join(names)}.",
                             fix="key bins by a judge's name.")
        try:
            checked = check_thresholds(edges, f"bins of {name}")
        except InputError as error:
            if error.fix:
                raise
            raise InputError(str(error), fix="give increasing thresholds onto the humans' scale, e.g. [0.25, 0.5, "
                                             "0.75] (a score s is the grade of the number of thresholds <= s).") from None
        if checked is None:
            raise InputError(f"bins of {name} must be a list of thresholds; got None.", fix="e.g. [0.25, 0.5, 0.75].")
        found[str(name)] = checked
    return found


def _noise(name: str, sets: Sequence[Any], bins: Sequence[float] | None, runs: Mapping[str, Any],
           metrics: Sequence[str], tests: Statistics, options: Settings) -> JudgeNoise:
    """The label noise of one judge's label sets: disagreement and kappa between them over the pairs every set
    grades, and each system's metric with the noise carried into its interval by :func:`evalbridge.uncertain`."""
    import bisect
    import itertools

    from ..stats.statistics import Statistics
    from .uncertainty import uncertain

    shared = [(q, d) for q in sets[0] for d in sets[0][q] if all(q in s and d in s[q] for s in sets[1:])]
    if not shared:
        raise InputError(f"the re-runs of judge {name!r} share no pair with its labels.",
                         fix="give re-runs of the same prompt over the same pairs.")
    differ = sum(len({s[q][d] for s in sets}) > 1 for q, d in shared)
    kappas = [agreement(a, b, names=(f"{name} #{i + 1}", f"{name} #{j + 1}"), bins=bins).cohen_kappa
              for (i, a), (j, b) in itertools.combinations(enumerate(sets), 2)]
    resampling = Statistics(n_resamples=tests.n_resamples, seed=tests.seed)
    graded = sets if bins is None else [  # scores onto the humans' scale: the grade is the thresholds <= the score
        {q: {d: bisect.bisect_right(bins, g) for d, g in docs.items()} for q, docs in labels.items()} for labels in sets]
    named = {f"{name} #{i + 1}": labels for i, labels in enumerate(graded)}
    intervals = tuple(u for system, run in runs.items() for u in uncertain(
        run, list(metrics), judges=named, system=system, statistics=resampling, settings=options).measured)
    finite = [k for k in kappas if not math.isnan(k)]
    return JudgeNoise(labellings=len(sets), pairs=len(shared), disagreement=differ / len(shared),
                      kappa=sum(finite) / len(finite) if finite else math.nan, intervals=intervals)


def _rank_key(card: JudgeCard) -> tuple[float, float, float]:
    row = card.summary()
    tau = row["tau_ap"]
    kappa = card.quadratic_kappa
    return (-(tau if not math.isnan(tau) else -math.inf), row["flipped"],
            -(kappa if not math.isnan(kappa) else -math.inf))


def judges(human: Any, labels: Mapping[str, Any], runs: Mapping[str, Any] | None = None,
           metrics: str | Iterable[str] = DEFAULT_METRICS, *, human_name: str = "human",
           scale: Iterable[float] | None = None, bins: Mapping[str, Sequence[float]] | None = None,
           reruns: Mapping[str, Sequence[Any]] | None = None,
           calibration_bins: int = CALIBRATION_BINS, statistics: Statistics | None = None, test: str | None = None,
           alpha: float | None = None, n_resamples: int | None = None, seed: int | None = None,
           settings: Settings | None = None, **keywords: Unpack[Keywords]) -> JudgeReport:
    """The report card of each judge in ``labels`` against the humans' labels, judges ranked best first.

    Args:
        human: the humans' labels (any qrels input: a path, :class:`~evalbridge.model.data.Qrels`, a dict).
        labels: judge name -> its labels (any qrels input), over the same pairs or some of them.
        runs: system name -> run; with them every system is evaluated under the humans and under each judge
            (``metrics``, the same settings) and the system orders compared.
        human_name: what the humans' labels are called in every rendering.
        scale: the grades of the scale (default: the grades the humans use); a judge's grade outside it is named.
        bins: judge name -> thresholds onto the humans' scale, for a judge giving scores or probabilities.
        reruns: judge name -> the labels of its re-runs (the same prompt run again over the same pairs; any qrels
            inputs): the card adds the label noise (disagreement and kappa between the label sets) and, with runs,
            each system's metric with the noise in its interval (:func:`evalbridge.uncertain` over the label sets;
            the statistics' resamples and seed). The card's other numbers are of ``labels[name]``.
        calibration_bins: bins of equal counts of a calibration curve over non-integer scores.
        statistics: the paired test of the significance flips (:class:`~evalbridge.Statistics`: its test, alpha,
            resamples and seed; two-sided, Holm over the pairs, see ``ranking_agreement``); ``test``, ``alpha``,
            ``n_resamples`` and ``seed`` as keywords go over it, as every verb takes them.
        settings, **keywords: the evaluations' settings (:class:`~evalbridge.model.settings.Settings`, whole or as
            keywords); ``min_relevance`` is the humans' relevance level (default: their own, else 1).

    Raises:
        InputError: no judge, a judge sharing no pair with the humans, non-integer grades without bins.
    """
    from ..evaluation.evaluating import as_qrels, as_run, evaluate
    from ..model.settings import settings_of

    chosen = settings_of(settings, keywords)
    tests = statistics_for("judges", statistics, {"test": test, "alpha": alpha, "n_resamples": n_resamples,
                                                  "seed": seed}, uses=USES, why=WHY)
    flips = tests.keywords("test", "alpha", "n_resamples", "seed")
    if not isinstance(labels, Mapping) or not labels:
        raise InputError(f"labels must map each judge's name to its labels; got {labels!r:.80}.",
                         fix='e.g. labels={"gpt4o": "judges/gpt4o.qrels", "llama": llama_qrels}.')
    calibration_bins = JUDGES_PARAMETERS["calibration_bins"].check(calibration_bins, key="calibration_bins")
    thresholds = check_bins(bins, labels)
    if reruns is not None and (not isinstance(reruns, Mapping) or any(
            str(n) not in map(str, labels) or isinstance(r, (str, bytes)) or not isinstance(r, Sequence) or not r
            for n, r in reruns.items())):
        raise InputError(f"reruns maps a judge's name to a list of its re-runs' labels; got {reruns!r:.80}.",
                         fix=f"e.g. reruns={{{next(iter(labels))!r}: ['rerun2.qrels', 'rerun3.qrels']}}, each name "
                             f"one of labels'.")
    qh = as_qrels(human, ids=chosen.ids)
    level = chosen.min_relevance if chosen.min_relevance is not None else (
        qh.min_relevance if qh.min_relevance is not None else 1)
    grades = frozenset(float(g) for g in (scale if scale is not None else qh.grades))
    from ..io.datasets import with_official

    if runs:  # "official": the measures of the humans' (else a judge's) dataset
        metrics = with_official(metrics, human, *labels.values())[0]
    asked = tuple([metrics] if isinstance(metrics, str) else metrics)
    read_runs = {name: as_run(run, ids=chosen.ids, duplicates=chosen.duplicates) for name, run in (runs or {}).items()}
    under_humans = {name: evaluate(qh, run, list(asked), settings=chosen) for name, run in read_runs.items()}
    cards = []
    for name, given in labels.items():
        qj = as_qrels(given, ids=chosen.ids)
        card = _card(str(name), qh, qj, grades, level, human_name, thresholds.get(str(name)), calibration_bins)
        if len(read_runs) > 1:
            under_judge = {run_name: evaluate(qj, run, list(asked), settings=chosen)
                           for run_name, run in read_runs.items()}
            order = ranking_agreement(under_humans, under_judge, metrics=list(asked), names=(human_name, str(name)),
                                      **flips)
            card = JudgeCard(**{**card.__dict__, "orders": tuple(order.rows)})
        again = (reruns or {}).get(name)
        if again is not None:
            sets = [qj, *(as_qrels(q, ids=chosen.ids) for q in again)]
            noise = _noise(str(name), sets, thresholds.get(str(name)), read_runs, asked, tests, chosen)
            card = JudgeCard(**{**card.__dict__, "noise": noise})
        cards.append(card)
    ranked_by = ("tau_AP of the system order on " + asked[0] + " against the humans', then fewer significance flips, "
                 "then quadratic kappa") if len(read_runs) > 1 else "quadratic kappa"
    return JudgeReport(cards=tuple(sorted(cards, key=_rank_key)), human=human_name, scale=tuple(sorted(grades)),
                       level=float(level), ranked_by=ranked_by, metrics=asked if len(read_runs) > 1 else (),
                       test=tests.test, alpha=tests.alpha)
