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

__all__ = ["DEFAULTS", "RANK_FIELDS", "NUMBER_DEFAULTS", "PRESETS", "Logged", "get_path", "choose_field", "preset_of"]

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


#: the field names of RAG tools' own logs: preset -> role -> its fields, the first one present in the first question
#: taken (ids before texts). ragas: ``SingleTurnSample``; LlamaIndex: ``RetrievalEvalResult``; DeepEval:
#: ``LLMTestCase``; TruLens: a ground-truth dataset beside the retrieved contexts; LangSmith: an experiment's
#: runs (``outputs``) beside their examples (``reference_outputs``).
PRESETS: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "ragas": {"query": ("user_input",), "retrieved": ("retrieved_context_ids", "retrieved_contexts"),
              "relevant": ("reference_context_ids", "reference_contexts")},
    "llamaindex": {"query": ("query",), "retrieved": ("retrieved_ids", "retrieved_texts"),
                   "relevant": ("expected_ids", "expected_texts")},
    "deepeval": {"query": ("input",), "retrieved": ("retrieval_context",), "relevant": ("context",)},
    "trulens": {"query": ("query_id", "query"), "retrieved": ("retrieved_contexts", "contexts"),
                "relevant": ("expected_chunks",)},
    "langsmith": {"query": ("reference_example_id", "example_id"), "retrieved": ("outputs.documents",),
                  "relevant": ("reference_outputs.documents", "reference_outputs.relevant")},
}


def preset_of(obj: Mapping[str, Any], preset: str | None, where: str) -> str | None:
    """The preset whose fields name the log's roles: the one given (checked), else the one preset every role of
    which has a field in the first question ``obj``, when the usual names do not find every role; else None.

    Raises:
        InputError: an unknown preset, or several presets that fit the question.
    """
    if preset is not None:
        if preset not in PRESETS:
            raise InputError(f"preset={preset!r} is not one of {', '.join(map(repr, PRESETS))}.", source=where,
                             fix="name the tool whose log this is, or name the fields (query=, retrieved=, relevant=).")
        return preset
    if all(any(name in obj for name in DEFAULTS[role]) for role in ("query", "retrieved", "relevant")):
        return None
    fitting = [name for name, roles in PRESETS.items()
               if all(any(_has(obj, field) for field in fields) for fields in roles.values())]
    if len(fitting) > 1:
        raise InputError(f"the question's fields fit the logs of several tools: {', '.join(fitting)}.", source=where,
                         fix=f"name the tool: {option('preset', fitting[0])}, or name the fields.")
    return fitting[0] if fitting else None


def _has(obj: Mapping[str, Any], path: str) -> bool:
    try:
        get_path(obj, path)
    except KeyError:
        return False
    return True


def choose_field(obj: Mapping[str, Any], role: str, given: str | None, where: str,
                 preset: str | None = None) -> tuple[str, str | None]:
    """(field, note) for ``role``: the given one, the first of the preset's fields present (``preset``, from
    :func:`preset_of`), or the single default present."""
    if given is not None:
        return given, None
    if preset is not None and role in PRESETS[preset]:
        fields = PRESETS[preset][role]
        field = next((name for name in fields if _has(obj, name)), None)
        if field is None:
            raise InputError(f"a {preset} log holds the {role} in {' or '.join(map(repr, fields))}; the question has "
                             f"{', '.join(map(repr, obj))}.", source=where,
                             fix=f"name the field: {option(role, column=True)}.")
        return field, f"{role}={field} ({preset})"
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
