"""``merge_judgements()``: new judgements added to a qrels, the source of every grade kept, conflicts refused unless a rule is chosen.

A pair judged on one side only takes that grade. A pair both sides grade alike keeps the base's grade and source.
A pair graded differently is a *conflict*: refused by default, naming the query, the document, both grades and
their sources; a rule (``prefer=``, :data:`RULES`) settles every conflict the same way, and the merged qrels say
how many it settled (:attr:`~evalbridge.model.data.Qrels.notes`).

A stratified sample (a graded batch of ``pool(..., strata=)``, or ``format="sample_eval"``) keeps its strata
(:attr:`~evalbridge.model.data.Qrels.strata`): the other side's pairs, judged wholly, are the stratum
:data:`~evalbridge.evalsets.stratified.JUDGED`, so ``xinfAP`` and ``infNDCG`` read the merged qrels. Two samples are
not merged (their rates would no longer hold), nor a pair the sample pooled but did not sample and the other side
judges (it would leave its stratum).

The source of each grade is kept in :attr:`~evalbridge.model.data.Qrels.judged_by`: the source an input already says
(graded pairs with a ``judge`` field, an earlier merge), else the name given for that side (``names=``), else its
file name, else ``base`` / ``new``.

Example:
    >>> merged = merge_judgements({"q1": {"a": 2}}, {"q1": {"b": 0}}, names=("human", "umbrela"))
    >>> dict(merged["q1"]), dict(merged.judged_by["q1"])
    ({'a': 2, 'b': 0}, {'a': 'human', 'b': 'umbrela'})
    >>> merge_judgements({"q1": {"a": 2}}, {"q1": {"a": 1}})
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: query 'q1': the two sets of judgements disagree on 1 pair: doc 'a' has grade 2 from base and grade 1 from new. Fix: choose a rule: prefer='base' (keep the base's grade), 'new' (take the new grade), 'higher' (the higher grade), 'lower' (the lower grade).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import InputError
from .stratified import JUDGED

__all__ = ["merge_judgements", "RULES"]

#: rule name -> (what it keeps, which grade wins: f(base grade, new grade) -> True when the new one does)
RULES: Mapping[str, tuple[str, Callable[[float, float], bool]]] = {
    "base": ("keep the base's grade", lambda base, new: False),
    "new": ("take the new grade", lambda base, new: True),
    "higher": ("the higher grade", lambda base, new: new > base),
    "lower": ("the lower grade", lambda base, new: new < base),
}


def _rules_fix() -> str:
    first, *rest = RULES.items()
    return (f"choose a rule: prefer={first[0]!r} ({first[1][0]}), "
            + ", ".join(f"{name!r} ({what})" for name, (what, _) in rest) + ".")


def _name(given: str | None, qrels: Any, fallback: str) -> str:
    if given is not None:
        return str(given)
    if qrels.source:
        from pathlib import Path

        return Path(str(qrels.source)).name
    return fallback


def merge_judgements(base: Any, new: Any, *, prefer: str | None = None,
                     names: Sequence[str | None] = (None, None)) -> Any:
    """``base`` with the judgements of ``new`` added; the source of every grade in ``judged_by``.

    Args:
        base: the judgements so far (anything :func:`evalbridge.read_qrels` reads: a TREC qrels file, graded pairs).
        new: the new judgements (graded pairs from a judge, :mod:`evalbridge.io.judging`; any qrels).
        prefer: how a pair graded differently on the two sides is settled (:data:`RULES`); None: refused.
        names: the source of each side's grades where the input does not say it (e.g. ``("human", "umbrela")``).

    Returns:
        :class:`~evalbridge.model.data.Qrels` with ``judged_by`` filled for every pair; the relevance level
        (``min_relevance``) of the base, and the topics of both.

    Raises:
        InputError: a conflict without a rule (query id, doc id, both grades and sources, the rules); an unknown
            rule; two different relevance levels; ids of two kinds (int and str).
    """
    from ..evaluation.evaluating import as_qrels
    from ..model.data import Qrels

    if prefer is not None and prefer not in RULES:
        raise InputError(f"prefer must be one of {', '.join(map(repr, RULES))} or None; got {prefer!r}.",
                         fix=_rules_fix())
    if isinstance(names, str) or len(names) != 2:
        raise InputError(f"names gives the source of each side's grades, two of them; got {names!r}.",
                         fix='e.g. names=("human", "umbrela").')
    sides = [as_qrels(base), as_qrels(new)]
    labels = [_name(given, q, fallback) for given, q, fallback in zip(names, sides, ("base", "new"))]
    levels = {q.min_relevance for q in sides} - {None}
    if len(levels) > 1:
        raise InputError(f"the two sets of judgements carry different relevance levels ({sides[0].min_relevance} "
                         f"and {sides[1].min_relevance}).", fix="read both with the same min_relevance.")
    for what, a, b in (("query", sides[0].query_id_kind, sides[1].query_id_kind),
                       ("doc", sides[0].doc_id_kind, sides[1].doc_id_kind)):
        if a and b and a != b:
            raise InputError(f"{what} ids are {'/'.join(a)} in the base but {'/'.join(b)} in the new judgements.",
                             fix="read both with ids='str'.")
    strata = _strata(sides, labels)
    grades: dict[str, dict[str, Any]] = {}
    source: dict[str, dict[str, str]] = {}
    for qrels, label in zip(sides[:1], labels[:1]):
        for qid, docs in qrels.items():
            known = qrels.judged_by.get(qid, {})
            grades[qid] = dict(docs)
            source[qid] = {doc: known.get(doc, label) for doc, grade in docs.items() if strata is None or grade >= 0}
    settled, added, agreed, unsampled = 0, 0, 0, 0
    added_by: dict[str, int] = {}
    conflicts: dict[str, list[tuple[str, Any, Any, str, str]]] = {}
    wins = RULES[prefer][1] if prefer is not None else None
    for qid, docs in sides[1].items():
        known = sides[1].judged_by.get(qid, {})
        row, row_source = grades.setdefault(qid, {}), source.setdefault(qid, {})
        for doc, grade in docs.items():
            by = known.get(doc, labels[1])
            if doc not in row:
                row[doc] = grade
                if strata is not None and grade < 0:
                    unsampled += 1
                    continue
                row_source[doc] = by
                added += 1
                added_by[by] = added_by.get(by, 0) + 1
            elif row[doc] == grade:
                agreed += 1
            elif wins is None:
                conflicts.setdefault(qid, []).append((doc, row[doc], grade, row_source[doc], by))
            else:
                settled += 1
                if wins(row[doc], grade):
                    row[doc], row_source[doc] = grade, by
    if conflicts:
        qid, listed = next(iter(conflicts.items()))
        doc, a, b, by_a, by_b = listed[0]
        total = sum(map(len, conflicts.values()))
        more = f" ({total} conflicting pairs over {len(conflicts)} queries)" if total > 1 else ""
        raise InputError(f"the two sets of judgements disagree on {total} pair{'s' if total > 1 else ''}: doc {doc!r} "
                         f"has grade {a!r} from {by_a} and grade {b!r} from {by_b}{more}.", query_id=qid,
                         fix=_rules_fix())
    rule = f", {settled} conflicts settled by prefer={prefer!r} ({RULES[prefer][0]})" if prefer is not None else ""
    sources = ", ".join(f"{n} from {who}" for who, n in sorted(added_by.items())) or "none"
    sample = "" if strata is None else (f", {unsampled} pooled pairs not sampled; a stratified sample (the pairs "
                                        f"judged wholly: stratum {JUDGED!r})")
    note = (f"judgements merged: {added} grades added ({sources}) to the {sides[0].n_rows} of {labels[0]}, "
            f"{agreed} pairs graded alike{rule}{sample}")
    topics = {**sides[1].topics, **sides[0].topics}
    return Qrels(grades, min_relevance=next(iter(levels), None), source=sides[0].source, topics=topics,
                 notes=(*sides[0].notes, *sides[1].notes, note), judged_by=source, allow_empty=True, strata=strata)


def _strata(sides: Sequence[Any], labels: Sequence[str]) -> dict[str, dict[str, str]] | None:
    """The strata of the merged qrels: the stratified side's, the other side's pairs judged wholly (None: neither
    side is a stratified sample)."""
    stratified = [i for i, side in enumerate(sides) if side.strata]
    if not stratified:
        return None
    if len(stratified) == 2:
        raise InputError(f"both {labels[0]} and {labels[1]} are stratified samples; merged, neither's inclusion "
                         f"rates would hold.", fix="evaluate each sample by itself, or draw one stratified pool over "
                                                  "every run and judge its batch.")
    sample, other = sides[stratified[0]], sides[1 - stratified[0]]
    strata = {str(q): dict(docs) for q, docs in sample.strata.items()}
    for qid, docs in other.items():
        row, grades = strata.setdefault(str(qid), {}), sample.get(qid, {})
        for doc in docs:
            if doc in grades and grades[doc] < 0:
                raise InputError(f"doc {doc!r} is pooled but not sampled in {labels[stratified[0]]} (stratum "
                                 f"{row.get(str(doc))!r}), and {labels[1 - stratified[0]]} judges it; it would leave "
                                 f"its stratum, whose rate then no longer holds.", query_id=str(qid),
                                 fix="pool against these judgements (a pool leaves the judged pairs out), or leave "
                                     "that grade out.")
            row.setdefault(str(doc), JUDGED)
    return strata
