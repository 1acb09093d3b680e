"""Hypothesis strategies for evalbridge tests: judgements, runs and metric specs.

Reusable by every test module::

    from strategies import metrics, qrels_and_run

    @given(qrels_and_run(), metrics())
    def test_something(data, metric): ...

Everything is drawn as plain ``dict`` objects (so tests can deep-copy and compare
them); wrap them in :class:`evalbridge.Qrels` / :class:`evalbridge.Run` when needed.
Runs are tie-free unless ``ties=True``, so every backend sees the same order.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from evalbridge.metrics.catalogue import METRICS
from evalbridge.metrics.spec import GainMap, Metric

__all__ = ["DOCS", "grades", "two_judges", "label_lists", "judged_list", "query_case", "qrels_and_run", "metrics",
           "gain_maps", "ranked_from_scores"]

#: The pool doc ids are drawn from (a shared pool makes judged and retrieved sets overlap).
DOCS = tuple(f"d{i:02d}" for i in range(24))


def grades(*, max_grade: int = 3, float_grades: bool = False, negative: bool = False) -> st.SearchStrategy:
    """One relevance grade: an int in [0, max_grade] (from -1 with ``negative``), or a float in [0, 10].

    Float grades are the LLM-judge case (003_2568de527c81821d.txt: scores 0-10); they have at most two
    decimals so that sums stay exact enough for equality tests.
    """
    low = -1 if negative else 0
    if float_grades:
        return st.integers(low * 100, 1000).map(lambda g: g / 100)
    return st.integers(low, max_grade)


def label_lists(*, max_grade: int = 1, min_size: int = 1, max_size: int = 12) -> st.SearchStrategy:
    """One query's labels in rank order, e.g. ``[1, 0, 1]`` (the input of ``from_labels``)."""
    return st.lists(st.integers(0, max_grade), min_size=min_size, max_size=max_size)


def judged_list(*, max_grade: int = 3, min_size: int = 1, max_size: int = 12,
                need_relevant: bool = True) -> st.SearchStrategy:
    """A judged ranked list (the shape of 002_302ebfc17d0870d4.txt) with at least one grade > 0 when ``need_relevant``."""
    labels = label_lists(max_grade=max_grade, min_size=min_size, max_size=max_size)
    return labels.filter(lambda ls: any(g > 0 for g in ls)) if need_relevant else labels


@st.composite
def query_case(draw: Any, *, max_docs: int = 10, max_grade: int = 3, float_grades: bool = False,
               negative: bool = False, min_retrieved: int = 0) -> tuple[dict[str, Any], list[str]]:
    """One query: ``(judged {doc: grade}, ranking [doc, ...])`` over the shared doc pool.

    The judged docs and the ranking overlap at random: some judged docs are not
    retrieved, some retrieved docs are not judged.
    """
    pool = DOCS[:max_docs]
    judged_docs = draw(st.lists(st.sampled_from(pool), unique=True, min_size=1, max_size=len(pool)))
    values = draw(st.lists(grades(max_grade=max_grade, float_grades=float_grades, negative=negative),
                           min_size=len(judged_docs), max_size=len(judged_docs)))
    judged = dict(zip(judged_docs, values))
    ranking = draw(st.lists(st.sampled_from(pool), unique=True, min_size=min_retrieved, max_size=len(pool)))
    return judged, ranking


_TIED_SCORES = st.sampled_from([0.5, 1.0, 1.5, 2.0])


@st.composite
def qrels_and_run(draw: Any, *, max_queries: int = 3, max_docs: int = 10, max_grade: int = 3,
                  float_grades: bool = False, negative: bool = False, ties: bool = False,
                  min_retrieved: int = 1, missing: bool = False,
                  run_only: bool = False) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, float]]]:
    """``(qrels, run)`` as plain dicts of dicts. Whole-number grades are a judged pool: when the draw holds four
    grades or more and none below 1 (a 1-4 rating, which binary metrics refuse without a level), one is made 0.

    Args:
        max_queries: queries in the qrels (at least one).
        max_docs, max_grade, float_grades, negative: see :func:`query_case`.
        ties: draw scores from a few values so equal scores happen; otherwise the
            scores are strictly decreasing along each drawn ranking.
        min_retrieved: fewest docs in each run query.
        missing: some qrels queries may be absent from the run (at least one stays).
        run_only: the run may hold a query that is not in the qrels.
    """
    n = draw(st.integers(1, max_queries))
    qrels: dict[str, dict[str, Any]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(1, n + 1):
        judged, ranking = draw(query_case(max_docs=max_docs, max_grade=max_grade, float_grades=float_grades,
                                          negative=negative, min_retrieved=min_retrieved))
        qid = f"q{i}"
        qrels[qid] = judged
        if ties:
            scores = draw(st.lists(_TIED_SCORES, min_size=len(ranking), max_size=len(ranking)))
            run[qid] = dict(zip(ranking, scores))
        else:
            run[qid] = {d: float(len(ranking) - r) for r, d in enumerate(ranking)}
    grades_drawn = {g for docs in qrels.values() for g in docs.values()}
    if not float_grades and len(grades_drawn) >= 4 and min(grades_drawn) >= 1:
        # a judged pool, not a 1-5 rating (which binary metrics refuse without a level): one judged non-relevant
        first = next(iter(qrels.values()))
        first[next(iter(first))] = 0
    if missing and n > 1:
        dropped = draw(st.lists(st.sampled_from(sorted(run)[1:]), unique=True))
        for qid in dropped:
            del run[qid]
    if run_only and draw(st.booleans()):
        run["q_run_only"] = {DOCS[0]: 1.0}
    return qrels, run


def ranked_from_scores(scores: dict[str, float]) -> list[str]:
    """Doc ids in trec_eval order (score descending, then doc id descending), written independently
    of :mod:`evalbridge.common.ranking` so tests can use it as an oracle."""
    return [d for d, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)]


_LEVELS = (None, 1, 2, 0.5, 3)
_PERSISTENCE = (None, 0.5, 0.8, 0.9, 0.95)


def gain_maps(*, negative: bool = True, probabilities: bool = False) -> st.SearchStrategy:
    """A ``gains={grade: gain}`` map over grades -1..3 (and 0.5): gains may be floats, zero or
    negative (``negative``), or stopping probabilities in [0, 1] (``probabilities``, for ERR)."""
    if probabilities:
        values = st.sampled_from([0, 0.125, 0.25, 0.5, 0.75, 1])
    else:
        values = st.sampled_from([-2, -1, 0, 0.5, 1, 2.5, 3, 7] if negative else [0, 0.5, 1, 2.5, 3, 7])
    return st.dictionaries(st.sampled_from([-1, 0, 0.5, 1, 2, 3]), values, min_size=1, max_size=4).map(GainMap)


@st.composite
def metrics(draw: Any, *, names: tuple[str, ...] | None = None, cutoff: bool | None = None,
            max_k: int = 20, gains: bool = False, negative_gains: bool = True) -> Metric:
    """A :class:`Metric` drawn from the catalogue with random options and cutoff.

    Args:
        names: restrict to these families (default: every family).
        cutoff: ``True`` only metrics with a cutoff, ``False`` only without, ``None`` either.
        max_k: largest cutoff drawn.
        gains: sometimes draw a custom gain map for the families that take one (off by default:
            a gain map is not monotone in the grade, so properties such as "the ideal ranking
            scores 1" do not hold with one).
        negative_gains: gain maps may hold negative gains (which make nDCG negative).

    Without ``names``, the stratified-sample estimates (xinfAP, infNDCG) are left out: they read qrels with strata
    (tests/test_stratified.py draws those).
    """
    families = [m for m in (names or tuple(m for m in METRICS if "stratum" not in METRICS[m].inputs))
                if not (cutoff is True and METRICS[m].cutoff == "none")
                and not (cutoff is False and METRICS[m].cutoff == "required")]
    name = draw(st.sampled_from(families))
    info = METRICS[name]
    if info.cutoff == "required" or (info.cutoff == "optional" and cutoff is True):
        k = draw(st.integers(1, max_k))
    elif info.cutoff == "optional" and cutoff is None:
        k = draw(st.none() | st.integers(1, max_k))
    else:
        k = None
    options: dict[str, Any] = {}
    for key in info.options:
        if key == "rel":
            value = draw(st.sampled_from(_LEVELS))
        elif key == "max_grade":
            continue
        elif key == "p":
            value = draw(st.sampled_from(_PERSISTENCE))
        elif key == "gains":
            value = draw(st.none() | gain_maps(negative=negative_gains, probabilities=name == "ERR")) if gains else None
        else:
            value = draw(st.sampled_from(info.allowed(key)))
        if value is not None:
            options[key] = value
    if (name == "ERR" or (name == "AP" and options.get("weights") == "graded")) and draw(st.booleans()):
        options["max_grade"] = draw(st.sampled_from([10, 12.5]))  # >= every grade drawn here
    return Metric(name, k, options)


@st.composite
def two_judges(draw: Any, *, max_queries: int = 4, max_grade: int = 3) -> tuple[dict, dict]:
    """Two qrels over the same pool: b keeps, regrades or drops each of a's judgements, and may judge
    documents (and a query) a did not."""
    qrels_a: dict[str, dict[str, int]] = {}
    qrels_b: dict[str, dict[str, int]] = {}
    for i in range(draw(st.integers(1, max_queries))):
        qid = f"q{i}"
        docs = draw(st.lists(st.sampled_from(DOCS[:12]), unique=True, min_size=1, max_size=12))
        qrels_a[qid] = {d: draw(grades(max_grade=max_grade)) for d in docs}
        row_b = {}
        for doc, grade in qrels_a[qid].items():
            fate = draw(st.sampled_from(["keep", "keep", "regrade", "drop"]))
            if fate != "drop":
                row_b[doc] = grade if fate == "keep" else draw(grades(max_grade=max_grade))
        for doc in draw(st.lists(st.sampled_from(DOCS[12:]), unique=True, max_size=3)):
            row_b[doc] = draw(grades(max_grade=max_grade))
        if row_b:
            qrels_b[qid] = row_b
    if draw(st.booleans()):
        qrels_b["q_only_b"] = {DOCS[0]: draw(grades(max_grade=max_grade))}
    first = next(iter(qrels_a))
    doc = next(iter(qrels_a[first]))
    qrels_b.setdefault(first, {})[doc] = qrels_b.get(first, {}).get(doc, qrels_a[first][doc])  # one shared pair
    return qrels_a, qrels_b
