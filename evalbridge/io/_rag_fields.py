"""The fields of a RAG log: the names each role is known by, dotted paths, how one field is picked, and the
logged fields (slice labels, numbers such as latency and cost) read beside the ranking.

Shared by the strict reader (:mod:`.rag`) and its columnar fast path (:mod:`._rag_columns`), so both pick
the same field with the same message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from ..common.wording import option

__all__ = ["DEFAULTS", "RANK_FIELDS", "NUMBER_DEFAULTS", "Logged", "get_path", "choose_field"]

#: role -> the field names looked for when the option is not given
DEFAULTS: Mapping[str, tuple[str, ...]] = {
    "query": ("query_id", "qid", "question_id", "id"),
    "retrieved": ("retrieved", "retrieved_ids", "contexts", "results", "docs"),
    "relevant": ("relevant", "relevant_ids", "ground_truth", "gold", "qrels"),
    "doc": ("doc_id", "id", "docid", "corpus_id", "corpus-id"),
}

#: the sub-fields of retrieved objects that hold a rank (1 = best) when no field is named: used when the objects
#: have no score, checked against the scores when they have one (never ignored)
RANK_FIELDS = ("rank", "position")


def get_path(obj: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted ``path``; KeyError when a part is missing."""
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise KeyError(path)
        value = value[part]
    return value


def choose_field(obj: Mapping[str, Any], role: str, given: str | None, where: str) -> tuple[str, str | None]:
    """(field, note) for ``role``: the given one, or the single default present."""
    if given is not None:
        return given, None
    found = [name for name in DEFAULTS[role] if name in obj]
    if len(found) != 1:
        problem = (f"no field looks like the {role} list" if role != "query" else "no field looks like the question id"
                   ) if not found else f"several fields could be the {role}: {', '.join(map(repr, found))}"
        looked = ", ".join(DEFAULTS[role])
        raise InputError(f"{problem} (looked for {looked}; the object has {', '.join(map(repr, obj))}).",
                         source=where, fix=f"name the field: {option(role, column=True)} (dotted paths reach "
                                                  f"nested objects).")
    return found[0], f"{role}={found[0]}"


#: the fields of numbers read beside the ranking when ``numbers=`` is not given: each one present in the first
#: question is read (latency, tokens, cost: summarised per system beside the metrics)
NUMBER_DEFAULTS: tuple[str, ...] = ("latency_ms", "latency", "latency_s", "cost", "cost_usd", "tokens",
                                    "total_tokens", "prompt_tokens", "completion_tokens")


class Logged:
    """What a log says of each question beside the ranking, read alike by the strict and the columnar reader:
    the slice labels of the field named ``slice`` (a text, or a list of texts; missing, null or [] = in no slice)
    and the numbers of the fields ``numbers`` (comma-separated; default: the :data:`NUMBER_DEFAULTS` present in
    the first question; a question without one is not counted in its summary). Values are checked where they
    are read: a label that is not a text, a number that is not one (:func:`evalbridge.common.values.check_value`)."""

    def __init__(self, first: Mapping[str, Any], *, slice: str | None, numbers: str | None, where: str) -> None:
        self.slice = slice
        if numbers is None:
            self.numbers = tuple(name for name in NUMBER_DEFAULTS if name in first)
            self.note = f"RAG log numbers picked by name: {', '.join(self.numbers)}" if self.numbers else None
        else:
            self.numbers = tuple(dict.fromkeys(part.strip() for part in str(numbers).split(",") if part.strip()))
            self.note = None
            if not self.numbers:
                raise InputError(f"numbers={numbers!r} names no field.", source=where,
                                 fix=f"name the fields of numbers, e.g. {option('numbers', column=True)}"
                                     f"latency_ms,cost.")
        self.values: dict[str, dict[Any, Any]] = {name: {} for name in (*([slice] if slice else []), *self.numbers)}

    @property
    def top(self) -> set[str]:
        """The top-level keys these fields are read from (not counted as ignored)."""
        return {name.split(".", 1)[0] for name in self.values}

    def take(self, obj: Mapping[str, Any], qid: Any, where: str) -> None:
        """Read one question's labels and numbers."""
        from ..common.values import check_value

        if self.slice is not None:
            label = _value(obj, self.slice)
            if isinstance(label, str):
                label = [label]
            if label is not None:
                if not isinstance(label, list) or not all(isinstance(x, str) and x for x in label):
                    raise InputError(f"the slice field {self.slice!r} holds {label!r:.60}; a slice label is a "
                                     f"non-empty text, or a list of them.", source=where, query_id=str(qid),
                                     fix="log the label as a text (\"billing\") or a list ([\"billing\", \"en\"]); "
                                         "null or [] puts the question in no slice.")
                if label:
                    self.values[self.slice][qid] = tuple(dict.fromkeys(label))
        for name in self.numbers:
            value = _value(obj, name)
            if value is not None:
                self.values[name][qid] = check_value(value, label=f"the {name!r} field", source=where,
                                                     query_id=str(qid))

    def result(self, ids: Any = str) -> dict[str, dict[str, Any]]:
        """field -> {query id as a text: value}."""
        return {name: {ids(q): v for q, v in values.items()} for name, values in self.values.items()}


def _value(obj: Mapping[str, Any], path: str) -> Any:
    try:
        return get_path(obj, path)
    except KeyError:
        return None
