"""Tell when the documents a run retrieved and the documents the qrels judge do not meet, and why they might not.

Every metric of a query whose retrieved ids never meet a judged id is 0, and nothing in the numbers says
why: texts given where ids were expected, ``"d1 "`` beside ``"d1"``, two id schemes. The evaluation
computes, with the metrics asked and by the same backend pass where it can, ``Judged@k`` (the judged
share of the first ``k`` documents, :func:`probe`); :func:`unmatched` turns the queries where it is 0 into
one :class:`~evalbridge.errors.EvalbridgeWarning` text: counted, with ids of both sides and the likely cause.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from ..metrics.spec import Metric, parse_metric
from ..model.data import Qrels, Run, rows_of
from ..common.wording import option

__all__ = ["probe", "unmatched", "describe", "relevant_only", "RELEVANT_ONLY", "SAMPLE"]

#: queries whose ids are looked at for the likely cause (the warning's path only)
SAMPLE = 20


def probe(metrics: Iterable[Metric]) -> Metric:
    """``Judged@k`` at the deepest cutoff asked (``Judged``, the whole ranking, when a metric has no cutoff)."""
    cutoffs = [m.k for m in metrics]
    deepest = None if not cutoffs or None in cutoffs else max(c for c in cutoffs if c is not None)
    return parse_metric("Judged" if deepest is None else f"Judged@{deepest}")


def _docs(data: Qrels | Run, qid: str) -> dict[str, float]:
    """One query's rows, without building the dict rows of a columnar table (the others' stay columns)."""
    table = data.columnar
    if table is None:
        return dict(data[qid])
    import numpy as np

    code = table.query_ids.index(qid)
    rows: list[int] = []
    for block in np.flatnonzero(table.block_code == code).tolist():
        start = int(table.block_start[block])
        rows.extend(range(start, start + int(table.block_lengths[block])))
    docs = table.docs.take(rows).to_pylist() if rows else []
    return dict(zip(docs, table.values[rows].tolist()))


def _retrieved_nothing(run: Run) -> set[str]:
    """The queries of ``run`` with an empty ranking (from the columns' block lengths when columnar)."""
    table = run.columnar
    if table is None:
        return {q for q, docs in rows_of(run).items() if not docs}
    import numpy as np

    counts = np.bincount(table.block_code, weights=table.block_lengths, minlength=len(table.query_ids))
    return {table.query_ids[i] for i in np.flatnonzero(counts == 0).tolist()}


def _best(rows: Mapping[str, float], n: int = 3) -> list[str]:
    """The ``n`` best-scored (or best-graded) ids."""
    return [doc for doc, _ in sorted(rows.items(), key=lambda item: (-item[1], item[0]))[:n]]  # in any row order


def _shown(ids: Sequence[str], width: int = 40) -> str:
    return ", ".join(repr(i if len(i) <= width else i[:width - 3] + "...") for i in ids) or "nothing"


def _texty(ids: Iterable[str]) -> bool:
    """Ids that look like passages of text: several words, or long."""
    ids = list(ids)
    return bool(ids) and sum(len(i) > 60 or len(i.split()) > 3 for i in ids) * 2 > len(ids)


_NUMBER = re.compile(r"[+-]?\d+(\.0*)?")

#: (how two ids that differ only this way are made equal, what the cause is called, its fix)
_SPELLINGS: tuple[tuple[Callable[[str], str], str, str], ...] = (
    (lambda i: " ".join(i.split()), "the ids differ only in white space (e.g. a trailing space, a newline, or two "
                                     "spaces for one)",
     "match them after normalising the white space on both sides (e.g. ' '.join(text.split()), or "
     "df['doc_id'].str.split().str.join(' ')): then they meet"),
    (str.casefold, "the ids differ only in letter case", "write the ids in one case on both sides"),
    (lambda i: str(int(float(i))) if _NUMBER.fullmatch(i.strip()) else i,
     "the ids are numbers written differently on each side (e.g. '7' and '007' or '7.0')",
     "write numeric ids one way on both sides (read them as strings, without padding or a decimal point)"),
)


def _cause(pairs: Sequence[tuple[set[str], set[str]]]) -> tuple[str, str] | None:
    """(likely cause, fix) from the judged and retrieved ids of a few queries, or None when no spelling explains."""
    judged = set().union(*(j for j, _ in pairs))
    retrieved = set().union(*(r for _, r in pairs))
    if _texty(retrieved) != _texty(judged):
        texts, ids = ("the run", "the qrels") if _texty(retrieved) else ("the qrels", "the run")
        return (f"{texts} holds texts where {ids} holds ids (e.g. a RAG log's retrieved contexts)",
                f"name the field or column that holds the ids ({option('doc', column=True)}), or give both "
                f"sides the same texts")
    for spelled, cause, fix in _SPELLINGS:  # only ids that do not already meet as they are written
        if any({spelled(i) for i in j - r} & {spelled(i) for i in r - j} for j, r in pairs):
            return cause, fix
    if any(j & r for j, r in pairs):
        return _BELOW_K
    return None


#: the cause of judged documents found below the first k
_BELOW_K = ("the judged documents are retrieved, but ranked below the first k",
            "judge the documents ranked first, or evaluate deeper (a larger k)")


#: the note of qrels that list only relevant documents, said once instead of a warning per query that misses them
RELEVANT_ONLY = ("the qrels list only relevant documents (no grade 0 anywhere, as BEIR and MS MARCO qrels do): a query "
                 "whose first documents hold none of them scores 0 for them, as intended, and is not warned about")


def relevant_only(qrels: Qrels, level: float = 1) -> bool:
    """The qrels list only relevant documents: no grade below the relevance ``level`` anywhere (BEIR, MS MARCO;
    a 1-5 rating read at level 4 lists non-relevant documents, its 1-3)."""
    table = qrels.columnar
    if table is not None:
        return bool(len(table.values)) and float(table.values.min()) >= level
    grades = [g for docs in rows_of(qrels).values() for g in docs.values()]
    return bool(grades) and min(grades) >= level


def unmatched(qrels: Qrels, run: Run, judged: Mapping[str, float], probe_metric: Metric, *,
              level: float | None = None) -> str | None:
    """The warning's text when some evaluated query has no judged document among its first ``k`` (``judged``:
    the query's ``Judged@k``, 0 exactly then), else None. With qrels that list only relevant documents at the
    relevance ``level`` (:func:`relevant_only`; None: not looked at) a miss is what they mean: warned only when every query misses or the ids look
    spelled apart (the evaluation notes :data:`RELEVANT_ONLY` once instead)."""
    empty = sorted(q for q, share in judged.items() if share == 0)  # by id, as on Spark
    if empty:
        nothing = _retrieved_nothing(run)
        empty = [q for q in empty if q not in nothing]  # a query that retrieved nothing has nothing to judge
    if not empty:
        return None
    if level is not None and len(empty) < len(judged) and relevant_only(qrels, level):
        sample = empty[:SAMPLE]
        cause = _cause([(set(_docs(qrels, q)), set(_docs(run, q))) for q in sample])
        if cause is None or cause[0] == _BELOW_K[0]:
            return None
    return describe(empty[:SAMPLE], len(empty), len(judged), probe_metric.k,
                    {q: _docs(qrels, q) for q in empty[:SAMPLE]}, {q: _docs(run, q) for q in empty[:SAMPLE]},
                    run.name)


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def where_they_differ(retrieved: Iterable[str], judged: Iterable[str], context: int = 20) -> str | None:
    """Where the closest retrieved and judged ids (the longest common start, at least 8 characters, not equal)
    first differ, shown around that place rather than cut at their start: ``the closest pair first differs at
    character 52: '...the fox jumps' vs '...the fox  jumps'``; None when no pair looks alike."""
    best: tuple[int, str, str] | None = None
    for r in retrieved:
        for j in judged:
            n = _common_prefix(r, j)
            if r != j and n >= 8 and (best is None or n > best[0]):
                best = (n, r, j)
    if best is None:
        return None
    n, r, j = best
    start = max(0, n - context)

    def around(text: str) -> str:
        part = text[start:n + context]
        return ("..." if start else "") + part + ("..." if n + context < len(text) else "")

    return (f"the closest retrieved and judged ids first differ at character {n + 1}: {around(r)!r} (retrieved) vs "
            f"{around(j)!r} (judged)")


def describe(sample: Sequence[str], n_empty: int, n_evaluated: int, k: int | None,
             judged_docs: Mapping[str, Mapping[str, float]], retrieved_docs: Mapping[str, Mapping[str, float]],
             name: str | None) -> str:
    """The warning's text from the first (at most :data:`SAMPLE`) of the ``n_empty`` queries, among
    ``n_evaluated``, with nothing judged in their first ``k``, and the judged and retrieved docs of each
    (grade / score by doc id): the one wording of every evaluation, in memory or on Spark."""
    first = f"first {k} retrieved documents" if k is not None else "retrieved documents"
    pairs = [(set(judged_docs.get(qid, {})), set(retrieved_docs.get(qid, {}))) for qid in sample]
    example = sample[0]
    retrieved, judged_ids = _best(retrieved_docs.get(example, {})), _best(judged_docs.get(example, {}))
    found = _cause(pairs)
    whose = f"run {name!r}: " if name else ""
    ids = f"e.g. query {example!r} retrieved {_shown(retrieved)} and the qrels judge {_shown(judged_ids)}"
    differ = where_they_differ(retrieved_docs.get(example, {}), judged_docs.get(example, {}))
    ids += f"; {differ}" if differ else ""
    if n_empty == n_evaluated:
        cause, fix = found or (
            "no retrieved id is among the ids the qrels judge: the two sides name documents differently (e.g. "
            "passage ids against document ids, or texts written apart)",
            "give both sides the same ids for the same documents")
        where = "retrieved document" if k is None else f"document among the first {k} retrieved"
        return (f"{whose}no {where} of any of the {n_evaluated} evaluated queries has a judgement, so "
                f"every metric of relevance is 0 ({ids}). Likely cause: {cause}. Fix: {fix}.")
    cause, fix = found or (
        "judgements that do not reach these documents (a pool made without this run, shallow judgements), or "
        "documents named differently on the two sides", "judge the documents this run retrieves, or check their ids")
    shown = ", ".join(map(repr, sample[:3])) + (f" (+{n_empty - 3} more)" if n_empty > 3 else "")
    return (f"{whose}{n_empty} of {n_evaluated} evaluated queries have no judgement among their {first} "
            f"({shown}), so their metrics of relevance are 0 ({ids}). Likely cause: {cause}. Fix: {fix}.")
